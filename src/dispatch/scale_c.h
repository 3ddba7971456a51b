// C = beta * C alone, for a call that computes no product (scales_c_alone in gemm_call.h: K
// or alpha is 0), as BLAS defines it: A and B are not read. The GEMM kernels cannot serve it
// (they take K >= 1, and read A and B whatever alpha is), and compiling a kernel at create
// would cost every handle some 70 ms of NVRTC for a call few engines make. So beta == 1
// enqueues nothing, beta == 0 a memset (C is not read: a NaN there is overwritten, as BLAS
// does), and any other beta a kernel of the library's own (templates/scale_c.cu), which
// NVRTC compiles at its first use by the handle and which is loaded then.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

#include "src/cuda/library.h"
#include "src/jit/arch.h"
#include "src/jit/compiler.h"

namespace sgemm {

// The kernel's binary for `arch`; throws as compile_standalone does. (ScaleC::load compiles
// through it; the CPU tests check it for every arch the families target.)
StandaloneKernel compile_scale_c(Arch arch);

class ScaleC {
public:
    // `compile` makes the kernel's binary: compile_scale_c, or a test's stand-in.
    explicit ScaleC(std::function<StandaloneKernel(Arch)> compile = compile_scale_c) : compile_(std::move(compile)) {}

    // Whether scaling by `beta` launches the kernel, which must then be load()ed first.
    static bool needs_kernel(float beta) { return beta != 0.0f && beta != 1.0f; }

    // Compiles the kernel for `arch` and loads it into the current context, unless that was
    // done. Thread-safe. Throws CompileError, CudaError, or Error (compiler.h). A CompileError
    // is kept and thrown again by later calls without running NVRTC: the source and the arch
    // do not change, so neither would the answer, and each try would hold every other
    // caller waiting for some 80 ms. A CUDA error or NVRTC's own failure (out of memory) is
    // tried again.
    void load(Arch arch);
    bool loaded() const { return kernel_.load(std::memory_order_acquire) != nullptr; }

    // Enqueues C (m x n, row length ldc, m and n at least 1) = beta * C on `stream`.
    cudaError_t launch(int m, int n, float beta, float* c, int ldc, cudaStream_t stream) const noexcept;

private:
    std::function<StandaloneKernel(Arch)> compile_;
    std::mutex load_mutex_;
    std::string compile_error_;  // the CompileError's text, once NVRTC refused the kernel
    Library library_;
    std::atomic<cudaKernel_t> kernel_{nullptr};
};

}  // namespace sgemm
