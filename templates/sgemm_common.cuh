// sgemm_common.cuh: the one argument block every SGEMM kernel takes, and the edge-aware
// loads and stores the kernels share.
//
// Every kernel in templates/ computes, for row-major matrices,
//     C[M x N] = alpha * A[M x K] * B[K x N] + beta * C[M x N]
// with element (r, c) of a matrix X at X[r * ldx + c]. A family whose template takes a
// transpose flag (TA or TB) reads that operand stored transposed instead: A as K x M, with
// element (m, k) at A[k * lda + m]; B as N x K, with (k, n) at B[n * ldb + k].
// The host (src/) includes this header too, so the layout of SgemmArgs is defined exactly
// once for both sides.
#pragma once

struct SgemmArgs {
    int M, N, K;
    float alpha, beta;
    const float* A; int lda;
    const float* B; int ldb;
    float* C;       int ldc;
    // Scratch for families that reduce across blocks (split-K): as many bytes as the
    // family's workspace_bytes() says. Its first SGEMM_WORKSPACE_COUNTER_BYTES hold tile
    // counters: zeroed once when the workspace is allocated, and left zeroed by every
    // kernel, so any configuration of any shape can follow any other on one workspace.
    // Partial results live after them. One launch at a time may use a workspace: one per
    // stream.
    void* workspace;
};

#define SGEMM_WORKSPACE_COUNTER_BYTES (1u << 20)
#define SGEMM_WORKSPACE_MAX_COUNTERS (SGEMM_WORKSPACE_COUNTER_BYTES / 4u)

// The split-K sum pass (sgemm_splitk.cuh): its blocks are SGEMM_SUM_PASS_QUADS x slices
// threads, each block summing that many groups of 4 elements of C. Slices are at most
// SGEMM_SUM_PASS_MAX_SLICES.
#define SGEMM_SUM_PASS_QUADS 64
#define SGEMM_SUM_PASS_MAX_SLICES 16

// How a split launch sums its slices (warptile's SUM_PASS; sgemm_splitk.cuh): in the kernel,
// by the block of each tile that arrives last; by a second kernel; by each slice adding
// its partial tile into C with float atomics, whose order, and so C's last bits, varies
// from launch to launch; or by the slices of a tile adding into C in turn, in slice order.
#define SGEMM_SUM_BY_LAST_BLOCK 0
#define SGEMM_SUM_BY_PASS 1
#define SGEMM_SUM_BY_ATOMICS 2
#define SGEMM_SUM_IN_ORDER 3

// The workspace a launch that splits K into `slices` needs (sgemm_splitk.cuh): the counters,
// then one partial M x N result per slice. One slice needs none.
constexpr unsigned long long sgemm_splitk_workspace_bytes(int slices, int M, int N) {
    return slices == 1 ? 0 : SGEMM_WORKSPACE_COUNTER_BYTES + 4ull * slices * M * N;
}

// The same for slices that add into C themselves, with atomics or in turn: the counters alone.
constexpr unsigned long long sgemm_splitk_counters_workspace_bytes(int slices) {
    return slices == 1 ? 0 : SGEMM_WORKSPACE_COUNTER_BYTES;
}

#if defined(__CUDACC__)

// Offsets are computed in 64 bits: M * lda alone passes 2^31 for large weights.
__device__ __forceinline__ long long sgemm_offset(int row, int col, int ld) {
    return (long long)row * ld + col;
}

// The epilogue. With beta == 0, C is never read, so NaN or garbage in C cannot leak
// into the result (BLAS semantics; the tuner poisons C with NaN to check this).
__device__ __forceinline__ void sgemm_store(const SgemmArgs& p, int row, int col, float acc) {
    float* c = p.C + sgemm_offset(row, col, p.ldc);
    *c = (p.beta == 0.0f) ? p.alpha * acc : p.alpha * acc + p.beta * *c;
}

// True when a 16-byte access at every row start is legal: the pointer is 16-byte aligned
// and the leading dimension is a multiple of 4 floats. Kernels with vector paths compute
// this once and fall back to scalar accesses otherwise, so they run on any pointer (but
// warptile's ALIGNED = 1 binaries, which assume it).
__device__ __forceinline__ bool sgemm_vec4_ok(const void* ptr, int ld) {
    return ((unsigned long long)ptr % 16 == 0) && (ld % 4 == 0);
}

// Four consecutive floats X[row][col .. col+3], zero outside rows x cols. One 16-byte load
// when the vector lies inside and vec_ok holds; otherwise scalar loads of the inside part.
__device__ __forceinline__ float4 sgemm_load4(const float* X, int ld, int row, int col,
                                              int rows, int cols, bool vec_ok) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row >= rows) return v;
    const float* x = X + sgemm_offset(row, col, ld);
    if (vec_ok && col + 3 < cols) return *reinterpret_cast<const float4*>(x);
    if (col + 0 < cols) v.x = x[0];
    if (col + 1 < cols) v.y = x[1];
    if (col + 2 < cols) v.z = x[2];
    if (col + 3 < cols) v.w = x[3];
    return v;
}

// Stores four accumulators to C[row][col .. col+3] through the epilogue, skipping what lies
// outside C; one 16-byte store (and load, when beta != 0) where that is legal.
__device__ __forceinline__ void sgemm_store4(const SgemmArgs& p, int row, int col, float4 acc,
                                             bool vec_ok) {
    if (row >= p.M) return;
    if (vec_ok && col + 3 < p.N) {
        float4* c = reinterpret_cast<float4*>(p.C + sgemm_offset(row, col, p.ldc));
        float4 out = make_float4(p.alpha * acc.x, p.alpha * acc.y, p.alpha * acc.z, p.alpha * acc.w);
        if (p.beta != 0.0f) {
            const float4 old = *c;
            out.x += p.beta * old.x; out.y += p.beta * old.y;
            out.z += p.beta * old.z; out.w += p.beta * old.w;
        }
        *c = out;
        return;
    }
    if (col + 0 < p.N) sgemm_store(p, row, col + 0, acc.x);
    if (col + 1 < p.N) sgemm_store(p, row, col + 1, acc.y);
    if (col + 2 < p.N) sgemm_store(p, row, col + 2, acc.z);
    if (col + 3 < p.N) sgemm_store(p, row, col + 3, acc.w);
}

#endif
