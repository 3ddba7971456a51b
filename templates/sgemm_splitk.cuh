// Split-K across blocks, reduced in a fixed order: the protocol every family that splits K
// over gridDim.y slices shares.
//
// Each block computes a partial tile of C for its slice of K and stores it with
// sgemm_splitk_store_partial or sgemm_splitk_store_partial4 (no alpha, no beta). Then every
// thread calls sgemm_splitk_finish (element by element) or sgemm_splitk_finish4 (four
// columns at a time). Both arrive first (sgemm_splitk_arrive): the block counts itself in
// on its tile's counter, and only the block that arrives last goes on (and resets the
// counter for the next launch). That block sums the partials of all slices in slice order,
// so results repeat bit for bit, applies alpha and beta once and writes C. No float atomics.
//
// The finish is a chain of L2 round trips (the partials were just written by other blocks):
// the number of round trips, not the bytes, is what it costs. On the H200, summing a
// batch-32 GEMM's 32x64 tiles over 8 slices in 4 round trips rather than 16 made the whole
// GEMM (32x4096x4096) 26% faster.
//
// Workspace layout (SgemmArgs::workspace): SGEMM_WORKSPACE_COUNTER_BYTES of counters, then
// partials as [slice][M][N] floats: sgemm_splitk_workspace_bytes (sgemm_common.cuh).
#pragma once
#include "sgemm_common.cuh"
#include "sgemm_timeline.cuh"

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

// Every thread of the block calls this after storing its partials; true in the block that
// arrives last of the `blocks` that share the tile. `tile` numbers the block's C tile
// uniquely among the launch's tiles (< SGEMM_WORKSPACE_MAX_COUNTERS).
__device__ __forceinline__ bool sgemm_splitk_arrive(const SgemmArgs& p, unsigned tile, unsigned blocks) {
    __shared__ bool last_block;
    unsigned* counters = static_cast<unsigned*>(p.workspace);
    __threadfence();  // this block's partials are visible device-wide before it counts in
    __syncthreads();
    if (threadIdx.x == 0) last_block = atomicAdd(&counters[tile], 1u) == blocks - 1;
    __syncthreads();
    if (!last_block) return false;
    __threadfence();
    if (threadIdx.x == 0) counters[tile] = 0;  // every slice has counted in: ready for the next launch
    return true;
}

// How the finish handles one or four columns at a time: the value, its zero, loading it
// from L2 (__ldcg, where other blocks stored it), adding, and storing it into C.
template <int WIDTH>
struct SgemmSplitkLanes;

template <>
struct SgemmSplitkLanes<1> {
    using Value = float;
    static __device__ __forceinline__ float zero() { return 0.0f; }
    static __device__ __forceinline__ float load(const float* x) { return __ldcg(x); }
    static __device__ __forceinline__ void add(float& sum, float v) { sum += v; }
    static __device__ __forceinline__ void store(const SgemmArgs& p, int row, int col, float v, bool) {
        sgemm_store(p, row, col, v);
    }
};

template <>
struct SgemmSplitkLanes<4> {
    using Value = float4;
    static __device__ __forceinline__ float4 zero() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }
    static __device__ __forceinline__ float4 load(const float* x) { return __ldcg(reinterpret_cast<const float4*>(x)); }
    static __device__ __forceinline__ void add(float4& sum, float4 v) {
        sum.x += v.x; sum.y += v.y; sum.z += v.z; sum.w += v.w;
    }
    static __device__ __forceinline__ void store(const SgemmArgs& p, int row, int col, float4 v, bool c_vec) {
        sgemm_store4(p, row, col, v, c_vec);
    }
};

// The last block's sum of the tile rows [m0, m0 + rows) x columns [n0, n0 + cols), clipped
// to C, WIDTH columns at a time (with WIDTH 4: cols and N multiples of 4). A thread sums
// BATCH groups of WIDTH columns, THREADS apart so that a warp's accesses are consecutive,
// and loads SLICES_IN_FLIGHT slices of them before it adds any: the finish is a chain of
// L2 round trips, and loads in flight make it short. Groups outside C read the first
// partial instead (any valid address: their sums are never stored) and slices past the
// last add zeros, which leave a sum as it is (it starts at +0.0f, so it is never -0.0f):
// the loads need no predicates, which ptxas spilled on sm_80, and cost their data and one
// address each.
template <int THREADS, int WIDTH, int BATCH, int SLICES_IN_FLIGHT>
__device__ void sgemm_splitk_sum_tile(const SgemmArgs& p, int m0, int rows, int n0, int cols, bool c_vec) {
    using Lanes = SgemmSplitkLanes<WIDTH>;
    using Value = typename Lanes::Value;
    const int slices = gridDim.y, groups_per_row = cols / WIDTH, groups = rows * groups_per_row;
    const long long slice_stride = (long long)p.M * p.N;
    for (int e0 = threadIdx.x; e0 < groups; e0 += BATCH * THREADS) {
        const float* src[BATCH];
        Value sum[BATCH];
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            const int e = e0 + b * THREADS, row = m0 + e / groups_per_row, col = n0 + WIDTH * (e % groups_per_row);
            const bool inside = e < groups && row < p.M && col < p.N;
            src[b] = sgemm_splitk_partials(p, 0) + (inside ? sgemm_offset(row, col, p.N) : 0);
            sum[b] = Lanes::zero();
        }
#pragma unroll 1
        for (int s0 = 0; s0 < slices; s0 += SLICES_IN_FLIGHT) {
            Value v[SLICES_IN_FLIGHT][BATCH];
#pragma unroll
            for (int s = 0; s < SLICES_IN_FLIGHT; ++s)
#pragma unroll
                for (int b = 0; b < BATCH; ++b) v[s][b] = Lanes::load(src[b] + min(s0 + s, slices - 1) * slice_stride);
#pragma unroll
            for (int s = 0; s < SLICES_IN_FLIGHT; ++s)
#pragma unroll
                for (int b = 0; b < BATCH; ++b) Lanes::add(sum[b], s0 + s < slices ? v[s][b] : Lanes::zero());
        }
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            const int e = e0 + b * THREADS, row = m0 + e / groups_per_row, col = n0 + WIDTH * (e % groups_per_row);
            if (e < groups && row < p.M && col < p.N) Lanes::store(p, row, col, sum[b], c_vec);
        }
    }
}

// Arrives, and in the last block sums the tile element by element: rows [m0, m0 + rows)
// and columns [n0, n0 + cols), clipped to C. 16 loads in flight per thread.
template <int THREADS>
__device__ void sgemm_splitk_finish(const SgemmArgs& p, unsigned tile, int m0, int rows, int n0, int cols,
                                    SgemmTimeline& timeline) {
    if (timeline.arrived(sgemm_splitk_arrive(p, tile, gridDim.y))) sgemm_splitk_sum_tile<THREADS, 1, 4, 4>(p, m0, rows, n0, cols, false);
}

// The same four columns at a time, with QUADS float4 loads in flight per thread: only
// where the partials take 16-byte accesses (sgemm_vec4_ok of the partials, so N is a
// multiple of 4) and cols is a multiple of 4. c_vec: C takes them too.
template <int THREADS, int QUADS>
__device__ void sgemm_splitk_finish4(const SgemmArgs& p, unsigned tile, int m0, int rows, int n0, int cols, bool c_vec,
                                     SgemmTimeline& timeline) {
    constexpr int BATCH = QUADS < 4 ? QUADS : 4;
    if (timeline.arrived(sgemm_splitk_arrive(p, tile, gridDim.y)))
        sgemm_splitk_sum_tile<THREADS, 4, BATCH, QUADS / BATCH>(p, m0, rows, n0, cols, c_vec);
}
