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
    const float* partials = sgemm_splitk_partials(p);
    for (int e = threadIdx.x; e < rows * cols; e += THREADS) {
        const int row = m0 + e / cols, col = n0 + e % cols;
        if (row >= p.M || col >= p.N) continue;
        float sum = 0.0f;
        for (int s = 0; s < slices; ++s) sum += __ldcg(partials + ((long long)s * p.M + row) * p.N + col);
        sgemm_store(p, row, col, sum);
    }
    if (threadIdx.x == 0) counters[tile] = 0;  // ready for the next launch
}
