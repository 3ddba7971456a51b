#include "src/dispatch/gemm_call.h"

#include "src/dispatch/last_error.h"

namespace sgemm {

sgemm_dispatch_status_t check_call(const GemmCall& c, GemmPrecision precision, ShapeKey& key) {
    const auto is_op = [](sgemm_dispatch_op_t op) { return op == SGEMM_DISPATCH_OP_N || op == SGEMM_DISPATCH_OP_T; };
    if (!is_op(c.trans_a) || !is_op(c.trans_b))
        return fail(SGEMM_DISPATCH_INVALID_VALUE, "trans_a=%d, trans_b=%d: each must be SGEMM_DISPATCH_OP_N (0) or _T (1)",
                    static_cast<int>(c.trans_a), static_cast<int>(c.trans_b));
    if (c.M < 0 || c.N < 0 || c.K < 0)
        return fail(SGEMM_DISPATCH_INVALID_SIZE, "M=%d N=%d K=%d: none may be negative", c.M, c.N, c.K);
    const bool ta = c.trans_a == SGEMM_DISPATCH_OP_T, tb = c.trans_b == SGEMM_DISPATCH_OP_T;
    // As cuBLAS, whose rule the fallback must meet too, and as BLAS: a leading dimension is at
    // least its matrix's stored row length and at least 1, checked even for an empty product.
    if (c.lda < 1 || c.ldb < 1 || c.ldc < 1)
        return fail(SGEMM_DISPATCH_INVALID_LEADING_DIMENSION, "lda=%d, ldb=%d, ldc=%d: each must be at least 1",
                    c.lda, c.ldb, c.ldc);
    // The row length of each matrix as stored (see dispatch.h).
    const int a_row = ta ? c.M : c.K, b_row = tb ? c.K : c.N;
    if (c.lda < a_row)
        return fail(SGEMM_DISPATCH_INVALID_LEADING_DIMENSION, "lda=%d is less than %s=%d, the row length of A stored %s",
                    c.lda, ta ? "M" : "K", a_row, ta ? "K x M (transposed)" : "M x K");
    if (c.ldb < b_row)
        return fail(SGEMM_DISPATCH_INVALID_LEADING_DIMENSION, "ldb=%d is less than %s=%d, the row length of B stored %s",
                    c.ldb, tb ? "K" : "N", b_row, tb ? "N x K (transposed)" : "K x N");
    if (c.ldc < c.N)
        return fail(SGEMM_DISPATCH_INVALID_LEADING_DIMENSION, "ldc=%d is less than N=%d, the row length of C", c.ldc,
                    c.N);

    if (c.M == 0 || c.N == 0) {
        key = ShapeKey{};
        key.M = c.M;
        key.N = c.N;
        key.K = c.K;
        return SGEMM_DISPATCH_SUCCESS;
    }
    // As in BLAS, a product that is not computed (scales_c_alone) reads neither A nor B: their
    // pointers may be NULL or misaligned, and the call is aligned as C is.
    const bool reads_a_and_b = !scales_c_alone(c);
    if (!c.C || (reads_a_and_b && (!c.A || !c.B)))
        return fail(SGEMM_DISPATCH_INVALID_VALUE, "%s is NULL", !c.C ? "C" : !c.A ? "A" : "B");

    const int alignment = reads_a_and_b ? alignment_class(c.A, c.lda, c.B, c.ldb, c.C, c.ldc)
                                        : alignment_class(c.C, c.ldc, c.C, c.ldc, c.C, c.ldc);
    if (alignment == 0) {
        if (!reads_a_and_b)
            return fail(SGEMM_DISPATCH_MISALIGNED, "C=%p must be 4-byte aligned", static_cast<const void*>(c.C));
        return fail(SGEMM_DISPATCH_MISALIGNED, "A=%p, B=%p and C=%p must be 4-byte aligned", static_cast<const void*>(c.A),
                    static_cast<const void*>(c.B), static_cast<const void*>(c.C));
    }
    key.M = c.M;
    key.N = c.N;
    key.K = c.K;
    key.trans_a = ta;
    key.trans_b = tb;
    key.precision = precision;
    key.alignment = alignment;
    return SGEMM_DISPATCH_SUCCESS;
}

std::string launch_without_product(const ShapeKey& key) {
    if (empty_product(key)) return "nothing: M or N is 0, an empty product; gemm returns SGEMM_DISPATCH_SUCCESS";
    if (key.K == 0)
        return "C = beta * C alone, as in BLAS: K is 0, so A and B are not read; nothing for beta = 1, a memset for "
               "beta = 0, else the library's kernel that scales C (compiled at its first use)";
    return "";
}

std::string explained_shape(const ShapeKey& key) {
    if (!empty_product(key)) return key.to_string();
    return "M=" + std::to_string(key.M) + " N=" + std::to_string(key.N) + " K=" + std::to_string(key.K);
}

}  // namespace sgemm
