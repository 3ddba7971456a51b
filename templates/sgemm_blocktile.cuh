// Rung 3: 2D block tile with register accumulators.
//
// A block computes a BM x BN tile of C with (BM/TM) * (BN/TN) threads, each owning a
// TM x TN sub-tile held in registers. Per step k of a BK-deep slice, a thread loads TM
// values of A and TN values of B from shared memory into registers and does TM * TN FMAs
// with them: an outer product. Shared-memory reads per FMA fall from 2 to (TM + TN) /
// (TM * TN), a quarter for 8 x 8, which is the big jump of the ladder.
//
// Layout: As[BM][BK] keeps A's row-major layout, so a thread's TM values of one column k
// are BK floats apart (scalar reads; rung 4 fixes this by transposing A on the load).
// Edges: loads outside the matrix fill zeros, stores outside C are skipped.
#pragma once
#include "sgemm_common.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_blocktile(const SgemmArgs p) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);  // thread's column of sub-tiles
    const int ty = tid / (BN / TN);  // thread's row of sub-tiles
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    float a_frag[TM];
    float b_frag[TN];

    for (int k0 = 0; k0 < p.K; k0 += BK) {
        // Cooperative loads: consecutive threads take consecutive columns, so each
        // warp reads contiguous runs of A's and B's rows (coalesced).
        for (int i = tid; i < BM * BK; i += THREADS) {
            const int r = i / BK, c = i % BK;
            const int gr = m0 + r, gc = k0 + c;
            As[r][c] = (gr < p.M && gc < p.K) ? p.A[sgemm_offset(gr, gc, p.lda)] : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += THREADS) {
            const int r = i / BN, c = i % BN;
            const int gr = k0 + r, gc = n0 + c;
            Bs[r][c] = (gr < p.K && gc < p.N) ? p.B[sgemm_offset(gr, gc, p.ldb)] : 0.0f;
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) a_frag[i] = As[ty * TM + i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b_frag[j] = Bs[k][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += a_frag[i] * b_frag[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = m0 + ty * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = n0 + tx * TN + j;
            if (row < p.M && col < p.N) sgemm_store(p, row, col, acc[i][j]);
        }
    }
}
