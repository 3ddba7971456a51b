// cuBLAS, the reference and the bar to beat: an RAII handle and the row-major call.
#pragma once
#include <cublas_v2.h>

#include <utility>

#include "src/cuda/check.h"
#include "templates/sgemm_common.cuh"

namespace sgemm {

class CublasHandle {
public:
    // Default math mode: exact fp32 FFMA, never TF32 (unless NVIDIA_TF32_OVERRIDE forces it).
    CublasHandle() {
        SGEMM_CUBLAS_CHECK(cublasCreate(&handle_));
        SGEMM_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
    }
    ~CublasHandle() {
        if (handle_) cublasDestroy(handle_);
    }
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    CublasHandle(CublasHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

    cublasHandle_t get() const { return handle_; }

    // Row-major C = alpha*A*B + beta*C. cuBLAS is column-major, and a row-major matrix is
    // its transpose in column-major, so we ask for C^T = B^T * A^T: swap the operands.
    void sgemm(const SgemmArgs& p, cudaStream_t stream) const {
        SGEMM_CUBLAS_CHECK(cublasSetStream(handle_, stream));
        SGEMM_CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &p.alpha,
                                       p.B, p.ldb, p.A, p.lda, &p.beta, p.C, p.ldc));
    }

    // The same in fp64, for references: row-major C = alpha*A*B + beta*C.
    void dgemm(int M, int N, int K, double alpha, const double* A, int lda, const double* B, int ldb, double beta,
               double* C, int ldc, cudaStream_t stream) const {
        SGEMM_CUBLAS_CHECK(cublasSetStream(handle_, stream));
        SGEMM_CUBLAS_CHECK(cublasDgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
    }

private:
    cublasHandle_t handle_ = nullptr;
};

}  // namespace sgemm
