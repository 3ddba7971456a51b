// cuBLAS, the reference and the bar to beat: an RAII handle and the row-major call.
#pragma once
#include <cublas_v2.h>

#include <cstddef>
#include <utility>

#include "src/cuda/check.h"
#include "templates/sgemm_common.cuh"

namespace sgemm {

class CublasHandle {
public:
    // Default math mode: exact fp32 FFMA, never TF32 (unless NVIDIA_TF32_OVERRIDE forces it).
    // Dispatch asks for CUBLAS_TF32_TENSOR_OP_MATH when a caller wants TF32.
    explicit CublasHandle(cublasMath_t math = CUBLAS_DEFAULT_MATH) {
        SGEMM_CUBLAS_CHECK(cublasCreate(&handle_));
        SGEMM_CUBLAS_CHECK(cublasSetMathMode(handle_, math));
    }
    ~CublasHandle() {
        if (handle_) cublasDestroy(handle_);
    }
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    CublasHandle(CublasHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

    cublasHandle_t get() const { return handle_; }

    // Row-major C = alpha*op(A)*op(B) + beta*C, where A is stored K x M when trans_a and B
    // N x K when trans_b (sgemm_common.cuh). cuBLAS is column-major, and a row-major matrix
    // is its transpose in column-major, so we ask for C^T = op(B)^T * op(A)^T: swap the
    // operands and keep each flag. (A stored N x K B reads in column-major as B itself, K x N,
    // so OP_T gives the B^T wanted; an untransposed one reads as B^T already.)
    void sgemm(const SgemmArgs& p, cudaStream_t stream, bool trans_a = false, bool trans_b = false) const {
        SGEMM_CUBLAS_CHECK(cublasSetStream(handle_, stream));
        SGEMM_CUBLAS_CHECK(sgemm_on_bound_stream(p, trans_a, trans_b));
    }

    // Ties the handle to one stream and to a workspace the caller owns, for good: dispatch
    // keeps one handle per stream, and cuBLAS must not allocate inside CUDA graph capture.
    // (cublasSetStream resets the workspace to cuBLAS's own pool, so both are set together.)
    // Statuses instead of throws here and below, for dispatch's hot path.
    cublasStatus_t bind(cudaStream_t stream, void* workspace, std::size_t bytes) const noexcept {
        const cublasStatus_t status = cublasSetStream(handle_, stream);
        return status != CUBLAS_STATUS_SUCCESS ? status : cublasSetWorkspace(handle_, workspace, bytes);
    }

    // sgemm() on the stream the handle is bound to.
    cublasStatus_t sgemm_on_bound_stream(const SgemmArgs& p, bool trans_a, bool trans_b) const noexcept {
        return cublasSgemm(handle_, op(trans_b), op(trans_a), p.N, p.M, p.K, &p.alpha, p.B, p.ldb, p.A, p.lda,
                           &p.beta, p.C, p.ldc);
    }

    // The same in fp64, for references: row-major C = alpha*op(A)*op(B) + beta*C.
    void dgemm(int M, int N, int K, double alpha, const double* A, int lda, const double* B, int ldb, double beta,
               double* C, int ldc, cudaStream_t stream, bool trans_a = false, bool trans_b = false) const {
        SGEMM_CUBLAS_CHECK(cublasSetStream(handle_, stream));
        SGEMM_CUBLAS_CHECK(
            cublasDgemm(handle_, op(trans_b), op(trans_a), N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
    }

private:
    static cublasOperation_t op(bool transposed) { return transposed ? CUBLAS_OP_T : CUBLAS_OP_N; }

    cublasHandle_t handle_ = nullptr;
};

}  // namespace sgemm
