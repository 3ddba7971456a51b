// The decode family: C[M x N] = alpha * A[M x K] * B[K x N] + beta * C for small M (the
// batch of a decode step, 1 to 32 rows per block) and N, K in the thousands (the weights),
// with B stored K x N or, with TB, N x K.
//
// Such a GEMM is bound by reading B: every weight is used by only M rows, so the kernel's
// whole job is to stream B from memory once, with 16-byte loads and many of them in flight,
// while the M-row slice of A it needs sits in shared memory. Batch is then nearly free: the
// same bytes feed 1 or 32 rows.
//
// Work split. A block owns MT rows and BN columns of C and one of gridDim.y slices of K
// ("split-K").
//  - Its BN/4 threads along N each own 4 columns, so a warp reads whole rows of B:
//    consecutive 16-byte vectors, fully coalesced.
//  - KW groups of such threads take interleaved quads of 4 rows of k inside the slice
//    (split-K across warps). Each thread keeps MT x 4 accumulators.
//  - Per quad: four LDG.128 of B (rows k..k+3), then per row m one LDS.128 of A[m][k..k+3]
//    (the same address for every lane: a broadcast) and 16 FMAs.
// Reduction, deterministic (fixed order, no float atomics):
//  - across the KW groups through shared memory, in passes of up to 4 rows of C;
//  - across the gridDim.y slices, when there are several, by the split-K protocol of
//    sgemm_splitk.cuh: the last block of a tile sums the slices in order or, with SUM_PASS =
//    1, a second kernel does (sgemm_decode_sum_pass), to the same sums. Only binaries
//    with SPLIT_K carry that code; they are launched with gridDim.y > 1, the others with 1.
// The slice of A (MT rows x the slice's k) is staged into dynamic shared memory once, at
// the start, while the first loads of B are already in flight: by cp.async copies on
// sm_80 and newer where A allows 16-byte accesses, else through registers. The B stream
// then runs without a barrier to its end. With cp.async, staging all of K is cheap enough
// for blocks of narrow columns (BN = 32 or 64) with many groups along k (KW = 32 or 64,
// where the registers allow) to own their columns without split-K, so no partial results
// cross blocks.
#pragma once
#include "sgemm_cp_async.cuh"
#include "sgemm_splitk.cuh"

// Keeps the compiler from moving memory accesses across this point (no instruction).
__device__ __forceinline__ void sgemm_compiler_fence() { asm volatile("" ::: "memory"); }

__device__ __forceinline__ float sgemm_component(const float4& v, int i) {
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// One quad of k: b holds a 4 x 4 block of B, by rows of k (b[k].n) or, with TB, by rows of
// n (b[n].k), as it was loaded. Per row m, one LDS.128 of A[m][k..k+3] and 16 FMAs, four
// independent ones (one per column) for each k.
template <int MT, int TB>
__device__ __forceinline__ void sgemm_decode_quad(float (&acc)[MT][4], const float* As, int a_stride,
                                                  int k_local, const float4 (&b)[4]) {
#pragma unroll
    for (int m = 0; m < MT; ++m) {
        const float4 a = *reinterpret_cast<const float4*>(As + m * a_stride + k_local);
#pragma unroll
        for (int k = 0; k < 4; ++k)
#pragma unroll
            for (int n = 0; n < 4; ++n)
                acc[m][n] += sgemm_component(a, k) * (TB ? sgemm_component(b[n], k) : sgemm_component(b[k], n));
    }
}

// EF=1 loads B with the evict-first policy (ld.global.cs): lines read once leave L2 first,
// so the stream does not push out what L2 holds for other kernels, dirty lines included,
// whose write-back would compete with the stream for DRAM. On the H200, with L2 full of
// dirty lines (the benchmark's flush), it made 1x4096x4096 12% and 8x6144x4096 7% faster,
// but 8x28672x4096 with two row tiles 5% slower (the second tile's reads of B miss L2):
// the tuner chooses.
//
// UNROLL quads of B (64 * UNROLL bytes per thread) are loaded before the first is used:
// with few rows there is little arithmetic to hide memory latency behind, so more bytes
// in flight per thread is what keeps the memory system busy. The next batch is loaded into
// a second set of registers before the current one is computed on, so a thread's loads stay
// in flight while it computes: on the H200 that made the best configurations of batch 1 and
// 8 (o, qkv) 1-5% faster than loading after the FMAs.
//
// TB=1 reads B stored N x K (weights kept out x in, as Hugging Face stores them: the NT
// GEMM x * W^T). A thread then loads, for each of its 4 columns, 16 bytes along that
// column's row of k, and the lanes of a warp are laid out so that its loads stay whole
// 128-byte lines: up to 8 neighbouring lanes take neighbouring quads of k on the same rows
// (KL below), the rest of the warp the next columns. Those 8 lanes read 8 different but
// neighbouring vectors of A, one conflict-free shared-memory wavefront, each shared by the
// lanes of the other columns.
//
// RING > 0 (sm_80+) holds B's batches in a ring of RING batches in shared memory, after A's
// slice, instead of two sets of registers: each thread copies its own batches there with
// cp.async, RING - 1 ahead of the one it computes on, and reads back only what it copied
// itself, so no barrier is needed. Registers then hold one batch, not two, so blocks of more
// groups along k keep more bytes in flight. With TB on the H200 (8 rows, sgemm-bench): 8x28672x4096
// in 0.129 ms against 0.140 for the best with registers (NN: 0.123), 8x128256x4096 in 0.501
// against 0.542, 8x6144x4096 in 0.041 against 0.043. With B stored K x N, 8 rows in
// 64-column strips of 32 groups along k, one batch of 1 quad in registers and two in flight
// in the ring: 8x6144x4096 in 0.0327 ms against 0.0355 for the best with registers.
template <int MT, int BN, int KW, int UNROLL, int EF, int TB, bool SPLIT_K, int RING, int SUM_PASS>
__global__ void __launch_bounds__(BN / 4 * KW)
sgemm_decode(const SgemmArgs p) {
    static_assert(SPLIT_K || !SUM_PASS, "only split-K has slices to sum");
    static_assert(SUM_PASS == SGEMM_SUM_BY_LAST_BLOCK || SUM_PASS == SGEMM_SUM_BY_PASS,
                  "decode sums its slices in the kernel or by the pass; it has no atomic adds");
#if __CUDA_ARCH__ < 800
    static_assert(RING == 0, "the ring of B is filled by cp.async, which needs sm_80");
#endif
    SgemmTimeline timeline;
    timeline.mark(SGEMM_MARK_START);
    constexpr int THREADS = BN / 4 * KW;
    constexpr int NT = BN / 4;                // threads across the block's columns
    constexpr int ROWS_PER_PASS = MT < 4 ? MT : 4;
    constexpr int STEP = UNROLL * KW;         // quads from one of a thread's batches to the next
    extern __shared__ __align__(16) float smem[];

    const int tid = threadIdx.x;
    constexpr int KL = KW < 8 ? KW : 8;  // with TB, lanes side by side along k
    const int tn = TB ? tid / KL % NT : tid % NT;
    const int tk = TB ? tid % KL + KL * (tid / (KL * NT)) : tid / NT;
    // Row tiles are the fastest grid dimension: the blocks that share a strip of B run
    // side by side, so only the first reads it from memory and the rest hit L2.
    const int m0 = blockIdx.x * MT;
    const int n0 = blockIdx.z * BN;
    const int col = n0 + tn * 4;
    const int splits = gridDim.y, split = blockIdx.y;
    const int k_span = ((p.K + splits - 1) / splits + 3) & ~3;  // k per slice, a multiple of 4
    const int kb = split * k_span;
    const int ke = min(p.K, kb + k_span);

    // B's interior strips take unconditional 16-byte loads, UNROLL quads at a time.
    const bool b_vec = sgemm_vec4_ok(p.B, p.ldb);
    const bool interior = b_vec && n0 + BN <= p.N;
    const int full_quads = max(0, (ke - kb) / 4);      // quads wholly inside the slice
    const int quads = max(0, (ke - kb + 3) / 4);
    const float* b_col = p.B + col;
    using Batch = float4[UNROLL][4];
    auto load_batch = [&](Batch& b, int q) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int k = kb + 4 * (q + u * KW);
                const float4* x = reinterpret_cast<const float4*>(TB ? p.B + sgemm_offset(col + i, k, p.ldb)
                                                                     : b_col + sgemm_offset(k + i, 0, p.ldb));
                b[u][i] = EF ? __ldcs(x) : __ldg(x);
            }
    };
    auto batch_fits = [&](int q) { return interior && q + (UNROLL - 1) * KW < full_quads; };

    // The first batch of B (with a ring, the first RING - 1) is in flight before A is staged:
    // its latency hides the staging.
    int q = tk;
    Batch b0, b1;
    const bool first_fits = batch_fits(q);
    float4* ring = reinterpret_cast<float4*>(smem + MT * k_span);  // [RING][UNROLL][4][THREADS]
    auto ring_at = [&](int stage, int u, int i) { return ring + ((stage * UNROLL + u) * 4 + i) * THREADS + tid; };
#if __CUDA_ARCH__ >= 800
    auto copy_batch = [&](int stage, int q) {
        const unsigned long long policy = EF ? sgemm_evict_first_policy() : 0;
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int k = kb + 4 * (q + u * KW);
                const float* x = TB ? p.B + sgemm_offset(col + i, k, p.ldb) : b_col + sgemm_offset(k + i, 0, p.ldb);
                if (EF)
                    sgemm_cp_async16(ring_at(stage, u, i), x, 16, policy);
                else
                    sgemm_cp_async16(ring_at(stage, u, i), x, 16);
            }
    };
    if constexpr (RING > 0) {
        for (int stage = 0; stage < RING - 1; ++stage) {
            if (batch_fits(q + stage * STEP)) copy_batch(stage, q + stage * STEP);
            sgemm_cp_async_commit();  // empty groups too: the waits below count groups
        }
    } else
#endif
    if (first_fits) load_batch(b0, q);

    // Stage A[m0 .. m0+MT)[kb .. kb+k_span) with zeros outside A. Where A allows 16-byte
    // accesses, on sm_80 and newer, as cp.async copies: a thread issues all of its copies
    // before any has landed, where loads through registers wait for each one before storing
    // it. A block that owns all of K stages 8 rows x 4096 k = 128 KB, 16 copies a thread.
    float* As = smem;
    const bool a_vec = sgemm_vec4_ok(p.A, p.lda);
    for (int i = tid; i < MT * (k_span / 4); i += THREADS) {
        const int m = i / (k_span / 4), qa = i % (k_span / 4);
        const int row = m0 + m, k = kb + 4 * qa;
        float* dst = As + m * k_span + 4 * qa;
#if __CUDA_ARCH__ >= 800
        if (a_vec) {
            const bool inside = row < p.M && k < ke;
            sgemm_cp_async16(dst, inside ? p.A + sgemm_offset(row, k, p.lda) : p.A, inside ? 4 * min(4, ke - k) : 0);
            continue;
        }
#endif
        *reinterpret_cast<float4*>(dst) = sgemm_load4(p.A, p.lda, row, k, p.M, ke, a_vec);
    }
#if __CUDA_ARCH__ >= 800
    sgemm_cp_async_commit();
    sgemm_cp_async_wait<0>();
#endif
    __syncthreads();

    // Stream this block's columns of B over the slice. While the batch in `now` is computed
    // on, `later` receives the next one. The two sets swap roles every batch, written out
    // twice so that every register index is static.
    float acc[MT][4] = {};
    auto compute = [&](const Batch& b, int q) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) sgemm_decode_quad<MT, TB>(acc, As, k_span, 4 * (q + u * KW), b[u]);
    };
    auto step = [&](Batch& now, Batch& later) {
        const bool next = batch_fits(q + STEP);
        if (next) load_batch(later, q + STEP);
        compute(now, q);
        q += STEP;
        return next;
    };
    if constexpr (RING > 0) {
#if __CUDA_ARCH__ >= 800
        // The copies of a thread's own batches need no barrier, only the compiler's order:
        // the fence keeps reads of a stage after the wait for it, and before the copy that
        // refills it.
        for (int stage = 0; batch_fits(q); q += STEP, stage = stage + 1 == RING ? 0 : stage + 1) {
            sgemm_compiler_fence();
            if (batch_fits(q + (RING - 1) * STEP)) copy_batch(stage == 0 ? RING - 1 : stage - 1, q + (RING - 1) * STEP);
            sgemm_cp_async_commit();
            sgemm_cp_async_wait<RING - 1>();
            sgemm_compiler_fence();
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
#pragma unroll
                for (int i = 0; i < 4; ++i) b0[u][i] = *ring_at(stage, u, i);
            compute(b0, q);
        }
        sgemm_cp_async_wait<0>();  // only empty groups are left; the reduction reuses the space
#endif
    } else if (first_fits) {
        while (step(b0, b1) && step(b1, b0)) {
        }
    }
    for (; q < quads; q += KW) {  // the rest, and edge columns, element by element where needed
        float4 tail[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
            tail[i] = TB ? sgemm_load4(p.B, p.ldb, col + i, kb + 4 * q, p.N, ke, b_vec)
                         : sgemm_load4(p.B, p.ldb, kb + 4 * q + i, col, ke, p.N, b_vec);
        sgemm_decode_quad<MT, TB>(acc, As, k_span, 4 * q, tail);
    }

    timeline.mark(SGEMM_MARK_LOOP_END);
    // Sum the KW groups, ROWS_PER_PASS rows of C at a time, through shared memory.
    float* red = smem;  // [KW][ROWS_PER_PASS][BN], reusing A's space
#pragma unroll
    for (int r0 = 0; r0 < MT; r0 += ROWS_PER_PASS) {
        __syncthreads();  // A, or the previous pass, is no longer read
#pragma unroll
        for (int r = 0; r < ROWS_PER_PASS; ++r)
            *reinterpret_cast<float4*>(red + (tk * ROWS_PER_PASS + r) * BN + tn * 4) =
                make_float4(acc[r0 + r][0], acc[r0 + r][1], acc[r0 + r][2], acc[r0 + r][3]);
        __syncthreads();
        for (int e = tid; e < ROWS_PER_PASS * BN; e += THREADS) {
            const int r = e / BN, c = e % BN;
            float sum = 0.0f;
#pragma unroll
            for (int g = 0; g < KW; ++g) sum += red[(g * ROWS_PER_PASS + r) * BN + c];
            const int row = m0 + r0 + r, column = n0 + c;
            if (row < p.M && column < p.N) {
                if (SPLIT_K)
                    sgemm_splitk_store_partial(p, split, row, column, sum);
                else
                    sgemm_store(p, row, column, sum);
            }
        }
    }
    if (SPLIT_K) {
        timeline.mark(SGEMM_MARK_PARTIAL_STORED);
        if (!SUM_PASS) sgemm_splitk_finish<THREADS>(p, blockIdx.z * gridDim.x + blockIdx.x, m0, MT, n0, BN, timeline);
    }
    timeline.mark(SGEMM_MARK_END);
    timeline.store(p);
}

// The split-K sum as a second pass (SUM_PASS = 1; sgemm_splitk_sum_pass says when it pays).
// It takes sgemm_decode's template arguments, so the host finds its symbol from the main
// kernel's; none of them matters here.
template <int MT, int BN, int KW, int UNROLL, int EF, int TB, bool SPLIT_K, int RING, int SUM_PASS>
__global__ void __launch_bounds__(SGEMM_SUM_PASS_QUADS * SGEMM_SUM_PASS_MAX_SLICES)
sgemm_decode_sum_pass(const SgemmArgs p) {
    static_assert(SPLIT_K && SUM_PASS, "the sum pass sums the slices of a split launch that left them to it");
    sgemm_splitk_sum_pass(p, sgemm_vec4_ok(p.C, p.ldc));
}
