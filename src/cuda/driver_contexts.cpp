#include "src/cuda/driver_contexts.h"

namespace sgemm {

void* driver_symbol(const char* name, int version) noexcept {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t status = cudaGetDriverEntryPointByVersion(name, &function, version, cudaEnableDefault, &found);
#else
    if (version != 12000) return nullptr;
    const cudaError_t status = cudaGetDriverEntryPoint(name, &function, cudaEnableDefault, &found);
#endif
    if (status != cudaSuccess) {
        (void)cudaGetLastError();  // this query's, not left for the caller's next runtime call to report
        return nullptr;
    }
    return found == cudaDriverEntryPointSuccess ? function : nullptr;
}

namespace {

// cuStreamGetCtx as CUDA 12.5 defined it names a green context's stream's primary context
// (and the green context in its third argument, a CUgreenCtx, which headers before 12.4 do
// not declare); as 12.0 did, the context made from the green one, which is another handle.
using StreamContextsFunction = CUresult (*)(CUstream, CUcontext*, void**);
using StreamContextFunction = CUresult (*)(CUstream, CUcontext*);

struct ContextFunctions {
    CUresult (*get_current)(CUcontext*) = nullptr;
    CUresult (*set_current)(CUcontext) = nullptr;
    StreamContextsFunction stream_contexts = nullptr;  // a driver of 12.5 or later
    StreamContextFunction stream_context = nullptr;    // else
};

// Looked up once, at the first dispatch handle's create, not in a call that may be inside a
// stream capture.
const ContextFunctions& context_functions() noexcept {
    static const ContextFunctions functions{driver_function<CUresult (*)(CUcontext*)>("cuCtxGetCurrent"),
                                            driver_function<CUresult (*)(CUcontext)>("cuCtxSetCurrent"),
                                            driver_function<StreamContextsFunction>("cuStreamGetCtx", 12050),
                                            driver_function<StreamContextFunction>("cuStreamGetCtx")};
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
    const ContextFunctions& driver = context_functions();
    CUcontext context = nullptr;
    void* green = nullptr;
    // cudaStream_t and CUstream are the same type, and cudaStreamLegacy and
    // cudaStreamPerThread the same handles as CU_STREAM_LEGACY and CU_STREAM_PER_THREAD.
    const CUresult status = driver.stream_contexts  ? driver.stream_contexts(stream, &context, &green)
                            : driver.stream_context ? driver.stream_context(stream, &context)
                                                    : CUDA_ERROR_NOT_FOUND;
    if (status != CUDA_SUCCESS) return std::nullopt;
    return context;
}

}  // namespace sgemm
