// The driver API's contexts, which the runtime API cannot name: which context is current,
// putting one back, and which context a stream belongs to. They are reached through the
// runtime's entry points, since the driver library is not linked (it is missing where there
// is no GPU, and every binary would fail to start there).
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <optional>

namespace sgemm {

// The address of the driver's function `name` as CUDA 12.0 defined it, or nullptr where
// there is no driver or no such function.
void* driver_symbol(const char* name) noexcept;

template <class Function>
Function driver_function(const char* name) noexcept {
    return reinterpret_cast<Function>(driver_symbol(name));
}

// The calling thread's current context (nullptr where it has none), or nothing where the
// driver cannot say.
std::optional<CUcontext> current_context() noexcept;

// Makes `context` the calling thread's current one (nullptr: none); false where it failed.
bool make_current(CUcontext context) noexcept;

// The context `stream` belongs to: the one current when it was created, or for 0,
// cudaStreamLegacy and cudaStreamPerThread the calling thread's current one. Nothing where
// the driver cannot say.
std::optional<CUcontext> context_of_stream(cudaStream_t stream) noexcept;

}  // namespace sgemm
