// Split-K across blocks, reduced in a fixed order: the protocol every family that splits K
// over gridDim.y slices shares.
//
// Each block computes a partial tile of C for its slice of K and stores it with
// sgemm_splitk_store_partial or sgemm_splitk_store_partial4 (no alpha, no beta). Then every
// thread calls sgemm_splitk_arrive: the block counts itself in on its tile's counter, and
// in the block that arrives last it returns true (and resets the counter for the next
// launch). That block sums the partials of all slices in slice order, so results repeat bit
// for bit, applies alpha and beta once and writes C: element by element with
// sgemm_splitk_finish, or from each thread's own fragments (sgemm_warptile.cuh), whose
// loads are all in flight at once. No float atomics.
//
// Workspace layout (SgemmArgs::workspace): SGEMM_WORKSPACE_COUNTER_BYTES of counters, then
// partials as [slice][M][N] floats: sgemm_splitk_workspace_bytes (sgemm_common.cuh).
#pragma once
#include "sgemm_common.cuh"

// The partial M x N result of one slice (row stride N).
__device__ __forceinline__ float* sgemm_splitk_partials(const SgemmArgs& p, int slice) {
    return reinterpret_cast<float*>(static_cast<char*>(p.workspace) + SGEMM_WORKSPACE_COUNTER_BYTES) +
           (long long)slice * p.M * p.N;
}

__device__ __forceinline__ void sgemm_splitk_store_partial(const SgemmArgs& p, int slice, int row, int col, float v) {
    sgemm_splitk_partials(p, slice)[sgemm_offset(row, col, p.N)] = v;
}

// Four partials at row, col .. col+3, skipping what lies outside C; one 16-byte store where
// vec_ok (sgemm_vec4_ok of the partials, which holds when N is a multiple of 4).
__device__ __forceinline__ void sgemm_splitk_store_partial4(const SgemmArgs& p, int slice, int row, int col, float4 v,
                                                            bool vec_ok) {
    if (row >= p.M) return;
    float* x = sgemm_splitk_partials(p, slice) + sgemm_offset(row, col, p.N);
    if (vec_ok && col + 3 < p.N) {
        *reinterpret_cast<float4*>(x) = v;
        return;
    }
    if (col + 0 < p.N) x[0] = v.x;
    if (col + 1 < p.N) x[1] = v.y;
    if (col + 2 < p.N) x[2] = v.z;
    if (col + 3 < p.N) x[3] = v.w;
}

// The four partials of one slice at row, col .. col+3, zeros outside C; read from L2
// (__ldcg), where the other blocks stored them.
__device__ __forceinline__ float4 sgemm_splitk_load_partial4(const SgemmArgs& p, int slice, int row, int col,
                                                             bool vec_ok) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row >= p.M) return v;
    const float* x = sgemm_splitk_partials(p, slice) + sgemm_offset(row, col, p.N);
    if (vec_ok && col + 3 < p.N) return __ldcg(reinterpret_cast<const float4*>(x));
    if (col + 0 < p.N) v.x = __ldcg(x);
    if (col + 1 < p.N) v.y = __ldcg(x + 1);
    if (col + 2 < p.N) v.z = __ldcg(x + 2);
    if (col + 3 < p.N) v.w = __ldcg(x + 3);
    return v;
}

// Every thread of the block calls this after storing its partials; true in the block that
// arrives last. `tile` numbers the block's C tile uniquely among the launch's tiles
// (< SGEMM_WORKSPACE_MAX_COUNTERS).
__device__ __forceinline__ bool sgemm_splitk_arrive(const SgemmArgs& p, unsigned tile) {
    __shared__ bool last_block;
    unsigned* counters = static_cast<unsigned*>(p.workspace);
    __threadfence();  // this block's partials are visible device-wide before it counts in
    __syncthreads();
    if (threadIdx.x == 0) last_block = atomicAdd(&counters[tile], 1u) == gridDim.y - 1;
    __syncthreads();
    if (!last_block) return false;
    __threadfence();
    if (threadIdx.x == 0) counters[tile] = 0;  // every slice has counted in: ready for the next launch
    return true;
}

// Arrives, and in the last block sums the tile element by element: rows [m0, m0 + rows)
// and columns [n0, n0 + cols), clipped to C.
template <int THREADS>
__device__ void sgemm_splitk_finish(const SgemmArgs& p, unsigned tile, int m0, int rows, int n0, int cols) {
    if (!sgemm_splitk_arrive(p, tile)) return;
    // A thread sums BATCH elements, THREADS apart, at a time: the loads of all of them are in
    // flight together, so a large tile costs a few L2 round trips rather than one per element.
    constexpr int BATCH = 8;
    for (int e0 = threadIdx.x; e0 < rows * cols; e0 += BATCH * THREADS) {
        int row[BATCH], col[BATCH];
        float sum[BATCH];
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            const int e = e0 + b * THREADS;
            row[b] = e < rows * cols ? m0 + e / cols : p.M;  // p.M: nothing to do
            col[b] = n0 + e % cols;
            sum[b] = 0.0f;
        }
        for (int s = 0; s < static_cast<int>(gridDim.y); ++s)
#pragma unroll
            for (int b = 0; b < BATCH; ++b)
                if (row[b] < p.M && col[b] < p.N)
                    sum[b] += __ldcg(sgemm_splitk_partials(p, s) + sgemm_offset(row[b], col[b], p.N));
#pragma unroll
        for (int b = 0; b < BATCH; ++b)
            if (row[b] < p.M && col[b] < p.N) sgemm_store(p, row[b], col[b], sum[b]);
    }
}
