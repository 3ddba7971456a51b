#include "src/cuda/saved_context.h"

#include <cuda_runtime_api.h>

namespace sgemm {

namespace {

// The driver's function `name` as CUDA 12.0 defined it, or nullptr where there is no driver.
template <class Function>
Function driver_function(const char* name) noexcept {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t status = cudaGetDriverEntryPointByVersion(name, &function, 12000, cudaEnableDefault, &found);
#else
    const cudaError_t status = cudaGetDriverEntryPoint(name, &function, cudaEnableDefault, &found);
#endif
    if (status != cudaSuccess) {
        (void)cudaGetLastError();  // this query's, not left for the caller's next runtime call to report
        return nullptr;
    }
    if (found != cudaDriverEntryPointSuccess) return nullptr;
    return reinterpret_cast<Function>(function);
}

struct ContextFunctions {
    CUresult (*get_current)(CUcontext*) = nullptr;
    CUresult (*set_current)(CUcontext) = nullptr;
};

const ContextFunctions& context_functions() noexcept {
    static const ContextFunctions functions{driver_function<CUresult (*)(CUcontext*)>("cuCtxGetCurrent"),
                                            driver_function<CUresult (*)(CUcontext)>("cuCtxSetCurrent")};
    return functions;
}

}  // namespace

SavedContext::SavedContext() noexcept {
    const ContextFunctions& driver = context_functions();
    known_ = driver.get_current && driver.set_current && driver.get_current(&context_) == CUDA_SUCCESS;
}

void SavedContext::restore() const noexcept {
    if (known_) (void)context_functions().set_current(context_);
}

}  // namespace sgemm
