// Rung 1 of the ladder: the naive kernel.
//
// One thread computes one element of C with a dot product straight from global memory.
// Threads of a warp take consecutive columns, so the reads of B and the write of C are
// coalesced, while A[row][k] is one broadcast per warp. Each FMA still needs two loads
// that mostly miss L1: the kernel is bound by memory traffic at an arithmetic intensity
// near 1 FLOP/byte, and everything after this rung is about reusing loaded data.
//
// Parameters: BLOCK_X threads along N, BLOCK_Y along M.
#pragma once
#include "sgemm_common.cuh"

template <int BLOCK_X, int BLOCK_Y>
__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
sgemm_naive(const SgemmArgs p) {
    const int col = blockIdx.x * BLOCK_X + threadIdx.x;
    const int row = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (row >= p.M || col >= p.N) return;  // predicated edge: no thread owns a missing element

    const float* a = p.A + sgemm_offset(row, 0, p.lda);
    const float* b = p.B + col;
    float acc = 0.0f;
    for (int k = 0; k < p.K; ++k)
        acc += a[k] * b[sgemm_offset(k, 0, p.ldb)];
    sgemm_store(p, row, col, acc);
}
