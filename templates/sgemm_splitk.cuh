// Split-K across blocks: the protocols every family that splits K over gridDim.y slices
// shares. Three reduce in a fixed order, so results repeat bit for bit: the two described
// next, and the slices taking turns on C (SGEMM_SUM_IN_ORDER, at the end of this file); one
// (below them) adds with float atomics.
//
// Each block computes a partial tile of C for its slice of K and stores it with
// sgemm_splitk_store_partial or sgemm_splitk_store_partial4 (no alpha, no beta). Then every
// thread calls sgemm_splitk_finish (element by element) or sgemm_splitk_finish4 (four
// columns at a time). Both arrive first (sgemm_splitk_arrive): the block counts itself in
// on its tile's counter, and only the block that arrives last goes on (and resets the
// counter for the next launch). That block sums the partials of all slices in slice order,
// so results repeat bit for bit, applies alpha and beta once and writes C.
//
// The finish is a chain of L2 round trips (the partials were just written by other blocks):
// the number of round trips, not the bytes, is what it costs. On the H200, summing a
// batch-32 GEMM's 32x64 tiles over 8 slices in 4 round trips rather than 16 made the whole
// GEMM (32x4096x4096) 26% faster.
//
// Or the sum is a second pass: a kernel launched after the split one (sgemm_splitk_sum_pass)
// sums every tile, in slice order too, so to the same sums. Where the grid is one wave (a
// batch-32 decode GEMM), the in-kernel finish leaves most SMs idle while the last block of
// each tile sums it, and the sum pass spreads that over the whole GPU; where blocks come in
// many waves, the finish of early tiles overlaps later tiles' loops, and the pass gained
// less on the H200 (2.5% at 32x28672x4096, against 5-8% where the grid is one wave). The
// tuner times both.
//
// Or each slice adds its partial tile into C with float atomics (SGEMM_SUM_BY_ATOMICS): no
// partials, no summing block, no second kernel, so a one-wave grid ends with each block's
// own adds. On the H200 the same tiles ran 5-9% under the sum pass at 32x4096x4096 and
// 32x6144x4096 (16 slices), 2% at 32x4096x14336 and 1.5% at 1024^3 (docs/RESULTS.md,
// thirty-sixth session). The price: the order of the adds, and so C's last bits, varies
// from launch to launch (as with cuBLAS's CUBLAS_ATOMICS_ALLOWED), and red.add.f32 flushes
// subnormal sums to zero. The tuner stores such kernels only when asked to
// (sgemm-tune --allow-atomics). The protocol (sgemm_splitk_atomic_*):
//  - slice 0's block first makes its tile of C beta * C (zeros when beta = 0: C is not read)
//    and counts in on the tile's counter;
//  - every other slice's block, its loop done, waits for that count, then adds;
//  - every block counts in again after its adds, and the last of the slices + 1 counts
//    resets the counter for the next launch.
// The wait relies on blocks starting in the order of their index (x fastest, then y), as
// CUTLASS's serial split-K does: slice 0's blocks (blockIdx.y = 0) come first, so the block
// waited for has started, and it waits for no one.
//
// Workspace layout (SgemmArgs::workspace): SGEMM_WORKSPACE_COUNTER_BYTES of counters, then
// partials as [slice][M][N] floats: sgemm_splitk_workspace_bytes (sgemm_common.cuh). The
// atomics and the turns on C use the counters alone (sgemm_splitk_counters_workspace_bytes).
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

// The split-K sum as a pass of its own: launched after the split kernel that stored every
// slice's partials (gridDim.y of that launch = blockDim.y here), block (x, s) loads slice s
// of SGEMM_SUM_PASS_QUADS groups of 4 consecutive elements of the partials (row-major M x
// N), so every load of the sum is in flight at once; then the threads of slice 0 add the
// slices in order, starting from +0.0f as sgemm_splitk_sum_tile does, so the sums are bit
// for bit the in-kernel finish's, and write C. With beta = 0 so is C; with beta != 0 each
// call site of the epilogue may fuse either product of alpha * sum + beta * C (--fmad), so
// C may differ from the in-kernel finish's in the last bit. c_vec: C takes 16-byte accesses.
//
// On sm_90 the host launches it as a programmatic dependent of the split kernel, so its
// blocks are resident as the split kernel's last blocks end, and griddepcontrol.wait holds
// them until that kernel's partials are complete and visible; launched plainly (or before
// sm_90) the wait returns at once, the stream having ordered the two kernels already. On
// the H200 a prototype of the pass gained about twice as much launched as a dependent as it
// did launched plainly. This pass took the tuned batch-32 decode tiles (8
// slices) at 32x4096x4096 from 38.0 to 34.8 us, 32x6144x4096 from 49.8 to 47.1,
// 32x4096x14336 from 104.1 to 98.2 and 32x28672x4096 from 195.6 to 190.1, and decode's
// 8x6144x4096 tile in 8 slices from 37.4 to 35.6 (docs/RESULTS.md, thirtieth session).
__device__ __forceinline__ void sgemm_splitk_sum_pass(const SgemmArgs& p, bool c_vec) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    // Dynamic (SGEMM_SUM_PASS_QUADS float4s a slice), not static: a binary's static shared
    // memory counts against the main kernel's dynamic share, which decode's slices of A and
    // warptile's stages need whole.
    extern __shared__ __align__(16) float4 sgemm_sum_pass_slices[];
    float4 (*slices)[SGEMM_SUM_PASS_QUADS] = reinterpret_cast<float4 (*)[SGEMM_SUM_PASS_QUADS]>(sgemm_sum_pass_slices);
    const long long elements = (long long)p.M * p.N;
    const long long e = ((long long)blockIdx.x * SGEMM_SUM_PASS_QUADS + threadIdx.x) * 4;
    const int slice = threadIdx.y;
    // 16-byte loads of the partials where N is a multiple of 4 (then so is every slice's
    // offset); otherwise four, short of the end.
    if (e < elements) {
        const float* x = sgemm_splitk_partials(p, slice) + e;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (sgemm_vec4_ok(sgemm_splitk_partials(p, 0), p.N)) {
            v = __ldcg(reinterpret_cast<const float4*>(x));
        } else {
            v.x = __ldcg(x);
            if (e + 1 < elements) v.y = __ldcg(x + 1);
            if (e + 2 < elements) v.z = __ldcg(x + 2);
            if (e + 3 < elements) v.w = __ldcg(x + 3);
        }
        slices[slice][threadIdx.x] = v;
    }
    __syncthreads();
    if (slice != 0 || e >= elements) return;
    float4 sum = SgemmSplitkLanes<4>::zero();
    for (int s = 0; s < blockDim.y; ++s) SgemmSplitkLanes<4>::add(sum, slices[s][threadIdx.x]);
    const int row = (int)(e / p.N), col = (int)(e % p.N);
    if (col + 3 < p.N) {  // the group lies in one row of C
        sgemm_store4(p, row, col, sum, c_vec && p.N % 4 == 0);
        return;
    }
    const float v[4] = {sum.x, sum.y, sum.z, sum.w};
    for (int i = 0; i < 4 && e + i < elements; ++i) sgemm_store(p, (int)((e + i) / p.N), (int)((e + i) % p.N), v[i]);
}

// SGEMM_SUM_BY_ATOMICS, first step: slice 0's block makes the tile rows [m0, m0 + rows) x
// columns [n0, n0 + cols) of C (clipped to C; cols a multiple of 4) beta * C, THREADS
// threads four columns at a time (16-byte accesses where c_vec), then counts in on it.
// Test builds only (KernelBuild::late_first_slice): slice 0's blocks sleep 100 us before they
// first write C, far longer than a test's slices take over their k, so that every other
// slice has to wait for them. Nothing in product builds.
__device__ __forceinline__ void sgemm_splitk_test_late_first_slice() {
#ifdef SGEMM_TEST_LATE_FIRST_SLICE
    if (blockIdx.y != 0) return;
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < 100000);
#endif
}

template <int THREADS>
__device__ void sgemm_splitk_atomic_prepare(const SgemmArgs& p, unsigned tile, int m0, int rows, int n0, int cols,
                                            bool c_vec) {
    if (blockIdx.y != 0) return;
    sgemm_splitk_test_late_first_slice();
    const int quads_per_row = cols / 4;
    for (int e = threadIdx.x; e < rows * quads_per_row; e += THREADS) {
        const int row = m0 + e / quads_per_row, col = n0 + 4 * (e % quads_per_row);
        if (row >= p.M) continue;
        float* c = p.C + sgemm_offset(row, col, p.ldc);
        if (c_vec && col + 3 < p.N) {
            float4* c4 = reinterpret_cast<float4*>(c);
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (p.beta != 0.0f) {
                v = *c4;
                v.x *= p.beta; v.y *= p.beta; v.z *= p.beta; v.w *= p.beta;
            }
            *c4 = v;
            continue;
        }
        for (int i = 0; i < 4 && col + i < p.N; ++i) c[i] = p.beta == 0.0f ? 0.0f : p.beta * c[i];
    }
    __threadfence();  // the tile is beta * C device-wide before the block counts in
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(&static_cast<unsigned*>(p.workspace)[tile], 1u);
}

// Second step, after the block's loop: a block of another slice waits until slice 0's has
// prepared the tile.
__device__ __forceinline__ void sgemm_splitk_atomic_wait(const SgemmArgs& p, unsigned tile) {
    if (blockIdx.y == 0) return;
    if (threadIdx.x == 0) {
        const unsigned* counter = &static_cast<const unsigned*>(p.workspace)[tile];
        unsigned count = 0;
        do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(count) : "l"(counter) : "memory");
        while (count == 0);
    }
    __syncthreads();
}

// Third step: adds alpha * acc into C[row][col .. col+3], skipping what lies outside C; one
// 16-byte add where vec_ok (sm_90 and newer: red.add.v4.f32).
__device__ __forceinline__ void sgemm_splitk_atomic_add4(const SgemmArgs& p, int row, int col, float4 acc,
                                                         bool vec_ok) {
    if (row >= p.M) return;
    float* c = p.C + sgemm_offset(row, col, p.ldc);
    const float4 v = make_float4(p.alpha * acc.x, p.alpha * acc.y, p.alpha * acc.z, p.alpha * acc.w);
#if __CUDA_ARCH__ >= 900
    if (vec_ok && col + 3 < p.N) {
        asm volatile("red.relaxed.gpu.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(c), "f"(v.x), "f"(v.y),
                     "f"(v.z), "f"(v.w)
                     : "memory");
        return;
    }
#endif
    if (col + 0 < p.N) atomicAdd(c + 0, v.x);
    if (col + 1 < p.N) atomicAdd(c + 1, v.y);
    if (col + 2 < p.N) atomicAdd(c + 2, v.z);
    if (col + 3 < p.N) atomicAdd(c + 3, v.w);
}

// Last step: the block counts in again; the last count of the launch resets the counter.
// Only thread 0 counts, after its own wait, so every wait on the tile is over by then. No
// fence before it: nothing in the launch reads C after the adds.
__device__ __forceinline__ void sgemm_splitk_atomic_done(const SgemmArgs& p, unsigned tile) {
    unsigned* counter = &static_cast<unsigned*>(p.workspace)[tile];
    if (threadIdx.x == 0 && atomicAdd(counter, 1u) == gridDim.y) *counter = 0;
}

// SGEMM_SUM_IN_ORDER: the slices of a tile take turns on C, in slice order, so C is
// ((beta * C + alpha * p0) + alpha * p1) + ... whatever the timing: it repeats bit for bit,
// with no partials in the workspace (its counters alone) and no second kernel. Slice s waits
// until the tile's counter reads s, adds into C (slice 0 writes alpha * p0 + beta * C as an
// unsplit tile would), and then sets it to s + 1; the last slice sets it back to 0 for the
// next launch. Each wait is on a block of lower index, started earlier (as for the atomics).
// Where a tile's slices run in different waves (many blocks a slice) the turns cost little;
// where they run side by side, the turns of a tile queue one after another. On the H200
// (docs/RESULTS.md, thirty-eighth session) 32x128256x4096 in 6 slices of 32x256 tiles, about
// 4 waves, ran 0.695 ms this way against 0.703 with atomics and 0.732 for the best tile
// without split-K (the sum pass's partials, 98 MB, would pass through DRAM); but 32x4096x4096
// in 16 slices, one wave, 0.079 ms against 0.033 with atomics: 15 turns of about 3 us each.
__device__ __forceinline__ void sgemm_splitk_in_order_wait(const SgemmArgs& p, unsigned tile) {
    sgemm_splitk_test_late_first_slice();
    if (threadIdx.x == 0 && blockIdx.y != 0) {
        const unsigned* counter = &static_cast<const unsigned*>(p.workspace)[tile];
        unsigned count = 0;
        do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(count) : "l"(counter) : "memory");
        while (count != blockIdx.y);
    }
    __syncthreads();
}

// Slice s > 0's turn, in two steps so that all of a thread's loads are in flight at once (one
// L2 round trip a turn, not one per quad): C[row][col .. col+3] as the previous slice's block
// left it, read from L2 (__ldcg), zeros outside C; then old + alpha * acc stored, skipping
// what lies outside C.
__device__ __forceinline__ float4 sgemm_splitk_in_order_load4(const SgemmArgs& p, int row, int col, bool vec_ok) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row >= p.M) return v;
    const float* c = p.C + sgemm_offset(row, col, p.ldc);
    if (vec_ok && col + 3 < p.N) return __ldcg(reinterpret_cast<const float4*>(c));
    if (col + 0 < p.N) v.x = __ldcg(c + 0);
    if (col + 1 < p.N) v.y = __ldcg(c + 1);
    if (col + 2 < p.N) v.z = __ldcg(c + 2);
    if (col + 3 < p.N) v.w = __ldcg(c + 3);
    return v;
}

// (Its stores repeat sgemm_splitk_store_partial4's: one helper for both changed the partial
// stores' code in every split binary, whose timings stand measured as they are.)
__device__ __forceinline__ void sgemm_splitk_in_order_store4(const SgemmArgs& p, int row, int col, float4 acc,
                                                             float4 old, bool vec_ok) {
    if (row >= p.M) return;
    float* c = p.C + sgemm_offset(row, col, p.ldc);
    const float4 v = make_float4(old.x + p.alpha * acc.x, old.y + p.alpha * acc.y, old.z + p.alpha * acc.z,
                                 old.w + p.alpha * acc.w);
    if (vec_ok && col + 3 < p.N) {
        *reinterpret_cast<float4*>(c) = v;
        return;
    }
    if (col + 0 < p.N) c[0] = v.x;
    if (col + 1 < p.N) c[1] = v.y;
    if (col + 2 < p.N) c[2] = v.z;
    if (col + 3 < p.N) c[3] = v.w;
}

// The end of a turn: C's new values are visible device-wide before the next slice may start.
__device__ __forceinline__ void sgemm_splitk_in_order_pass(const SgemmArgs& p, unsigned tile) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x != 0) return;
    unsigned* counter = &static_cast<unsigned*>(p.workspace)[tile];
    const unsigned next = blockIdx.y + 1 == gridDim.y ? 0u : blockIdx.y + 1;
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(counter), "r"(next) : "memory");
}
