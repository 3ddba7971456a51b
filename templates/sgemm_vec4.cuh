// Rung 4: 128-bit loads and a transposed A in shared memory.
//
// Two changes on top of rung 3.
// 1. Global loads move four floats at a time (LDG.E.128): a quarter of the load
//    instructions for the same bytes.
// 2. A is stored transposed, As[k][m]. A thread's TM values of column k are then
//    contiguous and come out of shared memory as TM/4 LDS.128 instead of TM scalar
//    loads, and B's TN values likewise as TN/4 LDS.128.
//
// Any pointer and any M, N, K: a vector that would cross an edge of the matrix, or whose
// row is not 16-byte aligned (odd lda, say), is loaded element by element with zeros
// outside (sgemm_load4). The fast path covers every interior tile of aligned matrices.
#pragma once
#include "sgemm_common.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_vec4(const SgemmArgs p) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    __shared__ __align__(16) float As[BK][BM];  // transposed: As[k][m]
    __shared__ __align__(16) float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);
    const int ty = tid / (BN / TN);
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;
    const bool a_vec = sgemm_vec4_ok(p.A, p.lda);
    const bool b_vec = sgemm_vec4_ok(p.B, p.ldb);
    const bool c_vec = sgemm_vec4_ok(p.C, p.ldc);

    float acc[TM][TN] = {};
    float a_frag[TM];
    float b_frag[TN];

    for (int k0 = 0; k0 < p.K; k0 += BK) {
        // The family's constraints make both vector counts multiples of THREADS, so
        // every thread does the same number of loads and the loops unroll.
#pragma unroll
        for (int it = 0; it < BM * BK / 4 / THREADS; ++it) {
            const int i = it * THREADS + tid;
            const int r = i / (BK / 4), c = (i % (BK / 4)) * 4;
            const float4 v = sgemm_load4(p.A, p.lda, m0 + r, k0 + c, p.M, p.K, a_vec);
            As[c + 0][r] = v.x;  // the transpose happens here, once per tile
            As[c + 1][r] = v.y;
            As[c + 2][r] = v.z;
            As[c + 3][r] = v.w;
        }
#pragma unroll
        for (int it = 0; it < BK * BN / 4 / THREADS; ++it) {
            const int i = it * THREADS + tid;
            const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[r][c]) =
                sgemm_load4(p.B, p.ldb, k0 + r, n0 + c, p.K, p.N, b_vec);
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&As[k][ty * TM + i]);
                a_frag[i] = v.x; a_frag[i + 1] = v.y; a_frag[i + 2] = v.z; a_frag[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[k][tx * TN + j]);
                b_frag[j] = v.x; b_frag[j + 1] = v.y; b_frag[j + 2] = v.z; b_frag[j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += a_frag[i] * b_frag[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            sgemm_store4(p, m0 + ty * TM + i, n0 + tx * TN + j,
                         make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), c_vec);
}
