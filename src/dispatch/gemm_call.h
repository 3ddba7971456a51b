// One sgemm_dispatch_gemm call's arguments, and their check. The check runs before any
// device work (it needs no GPU, so the tests run it on CI) and computes the call's shape key.
#pragma once
#include <sgemm/dispatch.h>

#include <string>

#include "db/shape_key.h"
#include "templates/sgemm_common.cuh"

namespace sgemm {

struct GemmCall {
    sgemm_dispatch_op_t trans_a = SGEMM_DISPATCH_OP_N, trans_b = SGEMM_DISPATCH_OP_N;
    int M = 0, N = 0, K = 0;
    float alpha = 1.0f, beta = 0.0f;
    const float* A = nullptr;
    int lda = 0;
    const float* B = nullptr;
    int ldb = 0;
    float* C = nullptr;
    int ldc = 0;

    // The kernels' argument block (no workspace yet).
    SgemmArgs args() const { return SgemmArgs{M, N, K, alpha, beta, A, lda, B, ldb, C, ldc, nullptr}; }
};

// SGEMM_DISPATCH_SUCCESS with `key` filled in (at `precision`), or the first problem found,
// its reason in last_error(): an op other than N or T, a negative size, a leading dimension
// below its stored row length or below 1, a NULL pointer, or a pointer that is not
// float-aligned (alignment class 0). An empty product (M or N is 0) with good leading
// dimensions is SUCCESS, as in cuBLAS: there is nothing to read or write, so its pointers and
// K are not looked at, and `key` holds only its sizes (empty_product). A call that only scales
// C (scales_c_alone) is checked for C alone, besides the leading dimensions.
sgemm_dispatch_status_t check_call(const GemmCall& call, GemmPrecision precision, ShapeKey& key);

// Whether check_call's key is an empty product, which launches nothing.
inline bool empty_product(const ShapeKey& key) { return key.M == 0 || key.N == 0; }

// Whether the call, if its product is not empty, is C = beta * C alone: BLAS computes no
// product where K or alpha is 0, so A and B are not read (a NaN in them does not reach C).
inline bool scales_c_alone(const GemmCall& call) { return call.K == 0 || call.alpha == 0.0f; }

// What runs for a shape key that computes no product, as explain (and sgemm-db explain) says
// it: nothing for an empty product, C scaled alone for K = 0; "" for any other key. (alpha
// 0, which a key does not hold, scales C alone too.)
std::string launch_without_product(const ShapeKey& key);

// The key as explain (and sgemm-db explain) prints it on its "shape" line: an empty product's
// key holds only its sizes, so only they are printed.
std::string explained_shape(const ShapeKey& key);

}  // namespace sgemm
