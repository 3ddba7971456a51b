#include "src/dispatch/scale_c.h"

#include <algorithm>
#include <string>

#include "src/cuda/check.h"
#include "src/dispatch/embedded_kernels.h"

namespace sgemm {
namespace {
constexpr const char* kSourceName = "scale_c.cu";
constexpr const char* kKernelName = "scale_c";  // its extern "C" name there
constexpr int kThreads = 256;
// The grid's extents: rows beyond them are taken in turn by the kernel's strides (CUDA allows
// 65535 blocks in y); 64 blocks of 256 columns keep a long row's loads in flight.
constexpr int kMaxRowBlocks = 65535;
constexpr int kMaxColumnBlocks = 64;
}  // namespace

StandaloneKernel compile_scale_c(Arch arch) {
    const char* source = find_embedded(embedded_dispatch_kernels(), kSourceName);
    if (!source) throw Error(std::string("the library's kernels hold no ") + kSourceName);
    return compile_standalone(kSourceName, source, {}, arch);
}

void ScaleC::load(Arch arch) {
    const std::lock_guard<std::mutex> lock(load_mutex_);
    if (loaded()) return;
    if (!compile_error_.empty()) throw CompileError(compile_error_);
    StandaloneKernel binary;
    try {
        binary = compile_(arch);
    } catch (const CompileError& e) {
        compile_error_ = e.what();
        throw;
    }
    library_ = Library(binary.cubin);
    const cudaKernel_t kernel = library_.kernel(kKernelName);
    // Querying an attribute loads the kernel into the context now, as the GEMM kernels are
    // (src/jit/loaded_kernel.cpp says why): a load at the first launch, which lazy loading
    // would make, may wait for the context to be idle, and would fall inside a capture.
    cudaFuncAttributes attributes;
    SGEMM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel)));
    kernel_.store(kernel, std::memory_order_release);
}

cudaError_t ScaleC::launch(int m, int n, float beta, float* c, int ldc, cudaStream_t stream) const noexcept {
    if (beta == 1.0f) return cudaSuccess;
    if (beta == 0.0f)
        return cudaMemset2DAsync(c, static_cast<std::size_t>(ldc) * sizeof(float), 0, static_cast<std::size_t>(n) * sizeof(float),
                                 static_cast<std::size_t>(m), stream);
    cudaKernel_t kernel = kernel_.load(std::memory_order_acquire);
    if (!kernel) return cudaErrorInvalidResourceHandle;  // load() was not called: a bug of the caller's
    const dim3 grid(static_cast<unsigned>(std::min((n + kThreads - 1LL) / kThreads, static_cast<long long>(kMaxColumnBlocks))),
                    static_cast<unsigned>(std::min(m, kMaxRowBlocks)));
    void* args[] = {&m, &n, &beta, &c, &ldc};
    return cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, dim3(kThreads), args, 0, stream);
}

}  // namespace sgemm
