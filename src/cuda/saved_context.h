// The calling thread's current CUDA context, kept to be put back: a create that fails gives
// its caller the thread back as it found it.
//
// The runtime API cannot say what to put back. cudaGetDevice says device 0 on a thread with
// no context, and cudaSetDevice(0) then starts device 0's context (hundreds of MB of its
// memory) in a process that only ever used another GPU. And cudaSetDevice makes a device's
// primary context current, so it cannot give back a context that the caller made itself with
// the driver API. The driver's cuCtxGetCurrent and cuCtxSetCurrent can
// (src/cuda/driver_contexts.h).
//
// What they cannot put back is the runtime's own choice of device on a thread that had no
// context: after cudaSetDevice(N), a thread whose context is then taken away again makes
// device N's primary context current at its next runtime call, as far as the runtime's
// documentation goes, and no runtime call changes that choice without starting a context.
#pragma once
#include <cuda.h>

#include <optional>

namespace sgemm {

class SavedContext {
public:
    // The calling thread's current context (none, too). Unknown where there is no driver.
    SavedContext() noexcept;
    // Makes it the calling thread's current context again, if it is known.
    void restore() const noexcept;

private:
    std::optional<CUcontext> context_;  // nothing where the driver could not say
};

}  // namespace sgemm
