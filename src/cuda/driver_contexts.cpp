#include "src/cuda/driver_contexts.h"

namespace sgemm {

void* driver_symbol(const char* name) noexcept {
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
    return found == cudaDriverEntryPointSuccess ? function : nullptr;
}

namespace {

struct ContextFunctions {
    CUresult (*get_current)(CUcontext*) = nullptr;
    CUresult (*set_current)(CUcontext) = nullptr;
    CUresult (*of_stream)(CUstream, CUcontext*) = nullptr;
};

const ContextFunctions& context_functions() noexcept {
    static const ContextFunctions functions{driver_function<CUresult (*)(CUcontext*)>("cuCtxGetCurrent"),
                                            driver_function<CUresult (*)(CUcontext)>("cuCtxSetCurrent"),
                                            driver_function<CUresult (*)(CUstream, CUcontext*)>("cuStreamGetCtx")};
    return functions;
}

}  // namespace

std::optional<CUcontext> current_context() noexcept {
    CUcontext context = nullptr;
    const auto get = context_functions().get_current;
    if (!get || get(&context) != CUDA_SUCCESS) return std::nullopt;
    return context;
}

bool make_current(CUcontext context) noexcept {
    const auto set = context_functions().set_current;
    return set && set(context) == CUDA_SUCCESS;
}

std::optional<CUcontext> context_of_stream(cudaStream_t stream) noexcept {
    CUcontext context = nullptr;
    const auto of_stream = context_functions().of_stream;
    // The runtime's stream handles are the driver's (cudaStreamLegacy and cudaStreamPerThread
    // are CU_STREAM_LEGACY and CU_STREAM_PER_THREAD).
    if (!of_stream || of_stream(reinterpret_cast<CUstream>(stream), &context) != CUDA_SUCCESS) return std::nullopt;
    return context;
}

}  // namespace sgemm
