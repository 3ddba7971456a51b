// Rung 5: cp.async and a double-buffered software pipeline.
//
// In rung 4 a tile's loads must land before any FMA on it can start, so the FMA units
// idle while memory answers. Here cp.async copies global memory straight into shared
// memory without passing through registers and without stalling the issuing thread.
// With two shared-memory stages the block computes on tile t while tile t+1 is in flight:
//
//     load(0)
//     for t: if t+1 exists: load(t+1), wait for all but the newest group; else wait for all
//            sync; compute(t); sync            (the second sync frees stage t for t+2)
//
// Loads. B keeps its layout, so each thread copies 16 bytes per cp.async. A must be
// transposed (As[k][m], as in rung 4), which a 16-byte copy cannot do, so A travels as
// 4-byte cp.async ops, each written straight to its transposed place. Rows of As are
// padded by 4 floats: a warp then writes 8 values of k for 4 rows into 32 distinct banks.
// Edges and unaligned matrices use cp.async's source size: bytes past it are zero-filled,
// so the tile outside the matrix holds zeros and no thread branches around a copy.
//
// Compute. A thread's TM x TN tile is split into 4 x 4 blocks spread a strip apart
// (rows ty*4 + g*STRIP_M). Lanes of a warp then read consecutive float4s of B from shared
// memory, which is free of bank conflicts, and write consecutive float4s of C.
#pragma once
#include "sgemm_common.cuh"
#include "sgemm_cp_async.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_async(const SgemmArgs p) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    constexpr int A_PAD = 4;
    constexpr int STRIP_M = 4 * (BM / TM);  // distance between a thread's 4-row blocks
    constexpr int STRIP_N = 4 * (BN / TN);
    __shared__ __align__(16) float As[2][BK][BM + A_PAD];
    __shared__ __align__(16) float Bs[2][BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);
    const int ty = tid / (BN / TN);
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;
    const bool b_vec = sgemm_vec4_ok(p.B, p.ldb);
    const bool c_vec = sgemm_vec4_ok(p.C, p.ldc);

    auto load_tile = [&](int stage, int k0) {
        // A: one element per op; consecutive threads walk a row's BK values, so a warp
        // reads whole 32-byte sectors of BK-float row segments.
#pragma unroll
        for (int it = 0; it < BM * BK / THREADS; ++it) {
            const int e = it * THREADS + tid;
            const int r = e / BK, c = e % BK;
            const int gr = m0 + r, gc = k0 + c;
            const bool inside = gr < p.M && gc < p.K;
            sgemm_cp_async4(&As[stage][c][r], inside ? p.A + sgemm_offset(gr, gc, p.lda) : p.A,
                            inside ? 4 : 0);
        }
        // B: 16 bytes per op where the row is aligned, else four 4-byte ops.
#pragma unroll
        for (int it = 0; it < BK * BN / 4 / THREADS; ++it) {
            const int v = it * THREADS + tid;
            const int r = v / (BN / 4), c = (v % (BN / 4)) * 4;
            const int gr = k0 + r, gc = n0 + c;
            float* dst = &Bs[stage][r][c];
            if (b_vec) {
                const int valid = (gr < p.K) ? max(0, min(4, p.N - gc)) : 0;
                sgemm_cp_async16(dst, valid > 0 ? p.B + sgemm_offset(gr, gc, p.ldb) : p.B, valid * 4);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const bool inside = gr < p.K && gc + j < p.N;
                    sgemm_cp_async4(dst + j, inside ? p.B + sgemm_offset(gr, gc + j, p.ldb) : p.B,
                                    inside ? 4 : 0);
                }
            }
        }
    };

    float acc[TM][TN] = {};
    float a_frag[TM];
    float b_frag[TN];

    const int k_tiles = (p.K + BK - 1) / BK;
    load_tile(0, 0);
    sgemm_cp_async_commit();
    for (int t = 0; t < k_tiles; ++t) {
        if (t + 1 < k_tiles) {
            load_tile((t + 1) & 1, (t + 1) * BK);
            sgemm_cp_async_commit();
            sgemm_cp_async_wait<1>();  // tile t has landed; t+1 may still be in flight
        } else {
            sgemm_cp_async_wait<0>();
        }
        __syncthreads();

        const int s = t & 1;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int g = 0; g < TM / 4; ++g) {
                const float4 v = *reinterpret_cast<const float4*>(&As[s][k][g * STRIP_M + ty * 4]);
                a_frag[4 * g] = v.x; a_frag[4 * g + 1] = v.y; a_frag[4 * g + 2] = v.z; a_frag[4 * g + 3] = v.w;
            }
#pragma unroll
            for (int g = 0; g < TN / 4; ++g) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[s][k][g * STRIP_N + tx * 4]);
                b_frag[4 * g] = v.x; b_frag[4 * g + 1] = v.y; b_frag[4 * g + 2] = v.z; b_frag[4 * g + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += a_frag[i] * b_frag[j];
        }
        __syncthreads();  // everyone is done with stage s before tile t+2 overwrites it
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = m0 + (i / 4) * STRIP_M + ty * 4 + i % 4;
#pragma unroll
        for (int g = 0; g < TN / 4; ++g)
            sgemm_store4(p, row, n0 + g * STRIP_N + tx * 4,
                         make_float4(acc[i][4 * g], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]),
                         c_vec);
    }
}
