// The driver API's contexts, which the runtime API cannot name: which context is current,
// putting one back, and which context a stream belongs to. They are reached through the
// runtime's entry points, since the driver library is not linked (it is missing where there
// is no GPU, and every binary would fail to start there).
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <optional>

namespace sgemm {

// The address of the driver's function `name` as CUDA `version` (12000 for 12.0) defined
// it, or nullptr where there is no driver or no such function. A runtime older than 12.5,
// which can only give the functions of its own version, gives nothing for a version after
// 12.0.
void* driver_symbol(const char* name, int version = 12000) noexcept;

template <class Function>
Function driver_function(const char* name, int version = 12000) noexcept {
    return reinterpret_cast<Function>(driver_symbol(name, version));
}

// The calling thread's current context (nullptr where it has none), or nothing where the
// driver cannot say.
std::optional<CUcontext> current_context() noexcept;

// Makes `context` the calling thread's current one (nullptr: none); false where it failed.
bool make_current(CUcontext context) noexcept;

// The context whose memory `stream`'s kernels reach: the one current when the stream was
// made, or for 0, cudaStreamLegacy and cudaStreamPerThread the calling thread's current one;
// for a green context's stream, its device's primary context, whose memory a green context
// shares. Nothing where the driver cannot say.
std::optional<CUcontext> context_of_stream(cudaStream_t stream) noexcept;

}  // namespace sgemm
