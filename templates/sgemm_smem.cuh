// Rung 2: shared-memory tiles.
//
// A block of TILE x TILE threads computes a TILE x TILE tile of C. It walks K in steps of
// TILE: each thread copies one element of A's tile and one of B's into shared memory, the
// block synchronises, and every thread then reads TILE elements of each tile from shared
// memory instead of global memory. Global traffic drops by a factor of TILE; the limit
// moves to shared-memory bandwidth, since each FMA still needs two shared loads.
//
// Edges: elements outside the matrix are loaded as zero, which adds nothing to the dot
// product, and threads outside C skip the store.
#pragma once
#include "sgemm_common.cuh"

template <int TILE>
__global__ void __launch_bounds__(TILE * TILE)
sgemm_smem(const SgemmArgs p) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x % TILE;  // column within the tile
    const int ty = threadIdx.x / TILE;  // row within the tile
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < p.K; k0 += TILE) {
        const int ka = k0 + tx;  // this thread's column of A's tile
        const int kb = k0 + ty;  // this thread's row of B's tile
        As[ty][tx] = (row < p.M && ka < p.K) ? p.A[sgemm_offset(row, ka, p.lda)] : 0.0f;
        Bs[ty][tx] = (kb < p.K && col < p.N) ? p.B[sgemm_offset(kb, col, p.ldb)] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();  // the next iteration overwrites the tiles
    }
    if (row < p.M && col < p.N) sgemm_store(p, row, col, acc);
}
