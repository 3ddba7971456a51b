// Split-K across blocks, reduced in a fixed order: the protocol every family that splits K
// over gridDim.y slices shares.
//
// Each block computes a partial tile of C for its slice of K and stores it with
// sgemm_splitk_store_partial (no alpha, no beta). It then calls sgemm_splitk_finish: the
// block counts itself in on its tile's counter, and the block that arrives last sums the
// partials of all slices in slice order (so results repeat bit for bit), applies alpha and
// beta once, writes C, and resets the counter for the next launch. No float atomics.
//
// Workspace layout (SgemmArgs::workspace): SGEMM_WORKSPACE_COUNTER_BYTES of counters, then
// partials as [slice][M][N] floats: sgemm_splitk_workspace_bytes (sgemm_common.cuh).
#pragma once
#include "sgemm_common.cuh"

__device__ __forceinline__ float* sgemm_splitk_partials(const SgemmArgs& p) {
    return reinterpret_cast<float*>(static_cast<char*>(p.workspace) + SGEMM_WORKSPACE_COUNTER_BYTES);
}

__device__ __forceinline__ void sgemm_splitk_store_partial(const SgemmArgs& p, int slice, int row, int col, float v) {
    sgemm_splitk_partials(p)[((long long)slice * p.M + row) * p.N + col] = v;
}

// Every thread of the block calls this after storing its partials. `tile` numbers the
// block's C tile uniquely among the launch's tiles (< SGEMM_WORKSPACE_MAX_COUNTERS); the tile
// covers rows [m0, m0 + rows) and columns [n0, n0 + cols), clipped to C.
template <int THREADS>
__device__ void sgemm_splitk_finish(const SgemmArgs& p, unsigned tile, int m0, int rows, int n0, int cols) {
    __shared__ bool last_block;
    const int slices = gridDim.y;
    unsigned* counters = static_cast<unsigned*>(p.workspace);
    __threadfence();  // this block's partials are visible device-wide before it counts in
    __syncthreads();
    if (threadIdx.x == 0) last_block = atomicAdd(&counters[tile], 1u) == static_cast<unsigned>(slices - 1);
    __syncthreads();
    if (!last_block) return;
    __threadfence();
    // A thread sums BATCH elements, THREADS apart, at a time: the loads of all of them are in
    // flight together, so a large tile costs a few L2 round trips rather than one per element.
    constexpr int BATCH = 8;
    const float* partials = sgemm_splitk_partials(p);
    const long long slice_stride = (long long)p.M * p.N;
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
        for (int s = 0; s < slices; ++s)
#pragma unroll
            for (int b = 0; b < BATCH; ++b)
                if (row[b] < p.M && col[b] < p.N) sum[b] += __ldcg(partials + s * slice_stride + sgemm_offset(row[b], col[b], p.N));
#pragma unroll
        for (int b = 0; b < BATCH; ++b)
            if (row[b] < p.M && col[b] < p.N) sgemm_store(p, row[b], col[b], sum[b]);
    }
    if (threadIdx.x == 0) counters[tile] = 0;  // ready for the next launch
}
