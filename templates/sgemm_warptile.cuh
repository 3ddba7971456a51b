// The warp-tiled family: C = alpha * op(A) * op(B) + beta * C in exact fp32 (FFMA only),
// for any M, N, K >= 1, any alpha and beta, any float-aligned pointers (16-byte aligned
// ones with ALIGNED = 1, below; ALIGNED = 2 stages misaligned ones), and all four transposes
// (TA, TB: see sgemm_common.cuh for the stored layouts).
//
// Three levels of tiles. A block computes a BM x BN tile of C (of C^T with CT = 1, below: then
// "A" and "B" in what follows mean the operands in those places); its warps each own a WM x WN
// part of it; a warp's 32 threads each own TM x TN accumulators. A thread's tile is split into
// 4 x 4 blocks spread a strip apart (rows ty*4 + g*STRIP_M, likewise columns), so for one k the
// lanes of a warp read their fragments of A and B as consecutive float4s from shared memory
// (LDS.128, at most 128 distinct bytes each, no bank conflicts; B with KMAJOR below reads
// float4s along k instead) and write C as consecutive float4s, whole 32-byte sectors per row.
//
// The pipeline. Tiles of BK values of k flow through STAGES shared-memory stages filled by
// cp.async (sgemm_cp_async.cuh): while the block computes on one stage, STAGES - 1 later
// tiles are in flight, which is what hides the memory latency. Per tile there is one
// barrier; the stage a tile's copies overwrite was last read before the previous barrier.
// Within a tile, fragments are double-buffered in registers: the LDS.128s for k+1 are
// issued before the FFMAs of k, so shared-memory latency hides behind arithmetic, across
// tile boundaries too.
//
// How an operand reaches shared memory depends on its stored layout (SgemmTileLoader).
// Shared memory holds Xs[k][x] (x = m for A, n for B), the fragments for one k side by side,
// except with KMAJOR (the last case below).
//  - Rows of k in memory, B with TB=0 and A with TA=1 (element (k, x) at X[k*ld + x]):
//    the rows of the tile are rows of Xs, so 16-byte cp.async copies them across as they
//    are. Where 16-byte copies are illegal (X not 16-byte aligned, or ld not a multiple of 4)
//    each vector becomes four 4-byte copies (not in ALIGNED = 1 binaries, below).
//  - Rows of x in memory, A with TA=0 and B with TB=1 (element (x, k) at X[x*ld + k]):
//    the tile is transposed on the way, by 4-byte cp.async copies that each write one
//    element to its transposed place. That costs as many instructions per element as the
//    alternative, an LDG.128 into registers then four STS, but no registers and no stall.
//    Rows of Xs are padded by 4 floats so these writes are free of bank conflicts.
//  - Rows of x kept as stored (KMAJOR = 1, B's place only, with BK = 32): Bs[x][BK + 4], the
//    tile's rows of x copied 16 bytes at a time (4-byte copies where 16 are illegal). The
//    fragments are read 4 k at a time, one LDS.128 along k per column of the thread, into two
//    buffers that alternate, so the LDS count per FFMA is the transposed layout's. NT's
//    weights, 64-byte pieces of rows 16 KB apart in a BK = 16 tile, streamed slowly; in
//    128-byte pieces copied as stored, NT's batch-32 decode GEMMs ran 10-22% faster on the
//    H200 (docs/RESULTS.md, twenty-eighth session). The lanes then number down the columns
//    (SgemmWarptileBlock), which keeps both operands' LDS.128 free of bank conflicts.
//
// B's copies fetch under L2's evict-first policy, A's under the normal one. In the skinny
// GEMMs of decoding, B (the weights) is read once while A is read by every column of tiles;
// if the stream of B evicts L2's dirty lines, their write-back shares DRAM with it. On the
// H200, 32x28672x4096 ran 3-8% faster so, and every other shape measured, squares
// included, within 1% (docs/RESULTS.md): the rows of tiles that share a strip of B run
// close together in time (sgemm_swizzle), so evict-first lines are still in L2 for them.
//
// Split-K. With gridDim.y > 1 the k tiles are divided into gridDim.y contiguous slices, one
// per blockIdx.y, and the slices are summed by a protocol of sgemm_splitk.cuh: in a fixed
// order inside the kernel, or with SUM_PASS = 1 by a second kernel, sgemm_warptile_sum_pass;
// or with SUM_PASS = 2 each slice adds into C with float atomics, faster where the grid is
// one wave, but C's last bits then vary from launch to launch; or with SUM_PASS = 3 the
// slices of a tile add into C in turn, in slice order, fast where they run in different
// waves (sgemm_splitk_in_order_wait). This fills the GPU when
// there are few tiles of C (1024^3, or M of a few dozen rows). Only binaries with SPLIT_K
// carry that code (gridDim.y must then be > 1, else 1): compiled in but unused, it made the
// non-split kernels 3-6% slower on the H200.
//
// C transposed (CT = 1). The block computes a tile of C^T = op(B)^T op(A)^T: B takes A's
// place and A B's, and the epilogue stores the tile transposed. Only NN uses it. There A's
// rows run along k, so its copies are transposed 4 bytes at a time, while B's are 16-byte;
// with CT, tall 16x8 thread tiles (the fastest shape) put A on the narrow side of a 256x128
// tile and B on the wide one. B keeps the evict-first policy in either place; the tiles
// that share a strip of it are then a tile row of C^T, which the swizzle keeps as close
// together as a tile column of C. On the H200, 256x128 tiles of 16x8 with 4 stages ran
// 4096^3 at 98.3% of cuBLAS so (3 stages: 93%), against 93.3% as tiles of C, and 95.2% for
// the best tile of C (64x256 of 8x16); 8192^3 at 99.3-99.5% against 96.7%.
//
// Operands known to be aligned (ALIGNED = 1). Such a binary serves only calls whose
// pointers and leading dimensions all take 16-byte accesses (the shape key's alignment class
// 16), so its copies of rows of k and its epilogue assume 16-byte accesses are legal instead
// of testing for it, and carry no 4-byte fallback for misaligned operands (edge columns of C,
// and split-K partials when N is no multiple of 4, still go 4 bytes at a time). Operands
// stored as rows of x are copied 4 bytes at a time either way, except with KMAJOR, whose
// 16-byte copies then drop their fallback too. Compiled in, the
// fallback's copies are predicated off but still issued in every k tile, and they shape how
// ptxas schedules the loop. On the H200 the tuner's winners without them ran 4096^3 at
// 101.5% of cuBLAS (the same tile with them: 93.4%), 8192^3 at 103.9% (96.2%) and 1024^3
// 4-5% faster; but one batch-32 tile ran 3.7% slower, so the tuner times both
// (docs/RESULTS.md, twenty-seventh session).
//
// Staged operands (ALIGNED = 2). A staging kernel runs first: for calls whose operands do not
// take 16-byte copies it copies the ones that would be copied 16 bytes at a time into the
// workspace, rows padded to 4 floats, and it computes C's last N mod 4 columns; a call with
// neither to do (alignment class 16, N a multiple of 4) has no staging kernel. The main
// kernel then runs the loop of ALIGNED = 1 on the first N - N mod 4 columns, testing C at
// run time (sgemm_staging.cuh says when that pays). That test costs the loop: at 4096^3,
// 128x256 tiles of 8x16 ran at 97.6% of cuBLAS with it and 101.2% without, and a copy of
// the loop for each answer ran at 95.4% (ptxas gave it 10 more registers; docs/RESULTS.md,
// forty-second session).
//
// Split-K inside the block (WK > 1). WK groups of warps share each tile of k: group g
// computes the g-th of WK contiguous runs of BK / WK values of k, for the whole block tile
// of C. After the last tile the groups' accumulators are summed through shared memory, in
// group order, and group 0 writes C. The grid stays the same while the SM gets WK times the
// warps: for grids too small to fill the GPU (a batch-32 decode GEMM, 1024^3) those warps
// hide the latency that few warps per scheduler leave exposed, without the extra partial
// tiles and L2 round trips of more slices across blocks.
#pragma once
#include "sgemm_common.cuh"
#include "sgemm_warptile_places.cuh"

// Floats per k row of an operand tile in shared memory, and the dynamic shared memory a
// configuration needs. The host includes this file too: the size is defined once.
constexpr int sgemm_tile_stride(int bx, bool k_rows) { return k_rows ? bx : bx + 4; }

// Floats per x row of a tile kept as rows of x (KMAJOR): its k, padded by 4.
constexpr int sgemm_k_major_stride(int bk) { return bk + 4; }

// With WK > 1 the same memory later holds the partial tiles of WK - 1 groups of warps.
constexpr unsigned sgemm_warptile_shared_bytes(int bm, int bn, int bk, int stages, int ta, int tb, int wk, int ct,
                                               int kmajor) {
    const unsigned b_floats = kmajor ? bn * sgemm_k_major_stride(bk)
                                     : bk * sgemm_tile_stride(bn, sgemm_warptile_b_k_rows(ta, tb, ct));
    const unsigned pipeline =
        4u * stages * (bk * sgemm_tile_stride(bm, sgemm_warptile_a_k_rows(ta, tb, ct)) + b_floats);
    const unsigned reduction = 4u * (wk - 1) * bm * bn;
    return pipeline > reduction ? pipeline : reduction;
}

// The workspace of a stream-K tail of `blocks` blocks (sgemm_warptile_stream_k): the tile
// counters, then two partial BM x BN tiles per block.
constexpr unsigned long long sgemm_stream_k_workspace_bytes(int bm, int bn, int blocks) {
    return SGEMM_WORKSPACE_COUNTER_BYTES + 2ull * blocks * bm * bn * 4;
}

#if defined(__CUDACC__)
#include "sgemm_cp_async.cuh"
#include "sgemm_splitk.cuh"
#include "sgemm_staging.cuh"

// A tile loader's copies; with EVICT_FIRST the lines they fetch leave L2 first.
template <bool EVICT_FIRST>
__device__ __forceinline__ void sgemm_tile_copy4(float* smem, const float* gmem, int src_bytes) {
    if (EVICT_FIRST)
        sgemm_cp_async4(smem, gmem, src_bytes, sgemm_evict_first_policy());
    else
        sgemm_cp_async4(smem, gmem, src_bytes);
}

template <bool EVICT_FIRST>
__device__ __forceinline__ void sgemm_tile_copy16(float* smem, const float* gmem, int src_bytes) {
    if (EVICT_FIRST)
        sgemm_cp_async16(smem, gmem, src_bytes, sgemm_evict_first_policy());
    else
        sgemm_cp_async16(smem, gmem, src_bytes);
}

// Copies BK x BX tiles of one operand, one tile after another along k, into Xs[BK][STRIDE].
// K_ROWS: the operand is stored as rows of k. EVICT_FIRST: fetch its lines under L2's
// evict-first policy. ALIGNED: the operand is known to take 16-byte copies (see the kernel's
// ALIGNED), so rows of k need no 4-byte fallback. Constructed with the operand's pointer and
// leading dimension, the tile's first x (x0) and the matrix's extent in x, and the first k
// of this block's slice; load() then copies the next tile. Copies outside the matrix in x
// may be skipped, leaving stale values: those rows or columns of the tile feed only elements
// of C outside C, which are never stored. Copies past K, in the last tile, are zero-filled:
// they feed every element.
template <bool K_ROWS, int BX, int BK, int THREADS, bool EVICT_FIRST, bool ALIGNED>
struct SgemmTileLoader;

template <int BX, int BK, int THREADS, bool EVICT_FIRST, bool ALIGNED>
struct SgemmTileLoader<true, BX, BK, THREADS, EVICT_FIRST, ALIGNED> {
    static constexpr int STRIDE = sgemm_tile_stride(BX, true);
    static constexpr int STAGE_FLOATS = BK * STRIDE;
    static constexpr int VECS_PER_ROW = BX / 4;
    static constexpr int ROWS_PER_PASS = THREADS / VECS_PER_ROW;  // may exceed BK: then some threads idle
    static constexpr int PASSES = (BK + ROWS_PER_PASS - 1) / ROWS_PER_PASS;
    static_assert(THREADS % VECS_PER_ROW == 0, "a pass covers whole rows of the tile");

    const float* src;  // this thread's first element of the next tile (column 0 when outside)
    int row;           // the tile row (k) this thread copies in pass 0
    int dst;           // its offset in Xs
    int cols;          // how many of its 4 columns lie inside the matrix
    bool vec;          // 16-byte copies are legal

    __device__ SgemmTileLoader(const float* X, int ld, int x0, int extent, int k_first) {
        row = threadIdx.x / VECS_PER_ROW;
        const int col = threadIdx.x % VECS_PER_ROW * 4;
        cols = min(max(extent - x0 - col, 0), 4);
        vec = ALIGNED || sgemm_vec4_ok(X, ld);
        src = X + sgemm_offset(k_first + row, cols > 0 ? x0 + col : 0, ld);
        dst = row * STRIDE + col;
    }

    // CHECKED: the tile may reach past K (rows at or past K are zero-filled) or past the
    // matrix in x; unchecked tiles lie wholly inside, and their copies need no tests.
    template <bool CHECKED>
    __device__ __forceinline__ void load(float* Xs, const float* X, int ld, int k0, int K) {
        const int bytes = CHECKED ? 4 * cols : 16;
#pragma unroll
        for (int i = 0; i < PASSES; ++i) {
            const int r = row + i * ROWS_PER_PASS;
            if (BK % ROWS_PER_PASS != 0 && r >= BK) break;
            const bool inside = !CHECKED || k0 + r < K;
            const float* g = inside ? src + sgemm_offset(i * ROWS_PER_PASS, 0, ld) : X;
            float* d = Xs + dst + i * ROWS_PER_PASS * STRIDE;
            if (vec) {
                sgemm_tile_copy16<EVICT_FIRST>(d, g, inside ? bytes : 0);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (!CHECKED || j < cols) sgemm_tile_copy4<EVICT_FIRST>(d + j, inside ? g + j : X, inside ? 4 : 0);
            }
        }
        src += sgemm_offset(BK, 0, ld);
    }
};

// Its copies are 4 bytes at any alignment: ALIGNED changes nothing here.
template <int BX, int BK, int THREADS, bool EVICT_FIRST, bool ALIGNED>
struct SgemmTileLoader<false, BX, BK, THREADS, EVICT_FIRST, ALIGNED> {
    static constexpr int STRIDE = sgemm_tile_stride(BX, false);
    static constexpr int STAGE_FLOATS = BK * STRIDE;
    // Thread t copies row t/8, k t%8 (+ 8j): a warp copies 4 rows x 8 consecutive k at a time,
    // whole 32-byte sectors of global memory, into shared-memory banks (4 * k + row) mod 32,
    // all distinct thanks to the padding. The k groups of a row differ by a constant offset,
    // so only the row passes need an address computed.
    static constexpr int ROWS_PER_PASS = THREADS / 8;
    static constexpr int PASSES = BX / ROWS_PER_PASS;
    static_assert(BK % 8 == 0 && BX % ROWS_PER_PASS == 0, "the block covers the BX x BK tile in 4 x 8 pieces");

    const float* src;  // this thread's first element of the next tile
    int col;           // its k within the tile
    int rows_left;     // rows of the matrix from this thread's pass-0 row on
    int dst;           // its offset in Xs

    __device__ SgemmTileLoader(const float* X, int ld, int x0, int extent, int k_first) {
        const int row = threadIdx.x / 8;
        col = threadIdx.x % 8;
        rows_left = extent - x0 - row;
        src = X + sgemm_offset(x0 + row, k_first + col, ld);
        dst = col * STRIDE + row;
    }

    template <bool CHECKED>
    __device__ __forceinline__ void load(float* Xs, const float* X, int ld, int k0, int K) {
#pragma unroll
        for (int i = 0; i < PASSES; ++i) {
            if (CHECKED && i * ROWS_PER_PASS >= rows_left) break;
            const float* g = src + sgemm_offset(i * ROWS_PER_PASS, 0, ld);
#pragma unroll
            for (int j = 0; j < BK / 8; ++j) {
                const bool inside = !CHECKED || k0 + col + 8 * j < K;
                sgemm_tile_copy4<EVICT_FIRST>(Xs + dst + 8 * j * STRIDE + i * ROWS_PER_PASS, inside ? g + 8 * j : X,
                                              inside ? 4 : 0);
            }
        }
        src += BK;
    }
};

// KMAJOR: copies BX x BK tiles of an operand stored as rows of x (element (x, k) at
// X[x*ld + k]) into Xs[BX][BK + 4] as they are stored, 16 bytes at a time: a quarter of the
// copies that transpose (above), for a different way of reading the fragments (see the
// kernel's KMAJOR). The same contract as SgemmTileLoader.
template <int BX, int BK, int THREADS, bool EVICT_FIRST, bool ALIGNED>
struct SgemmKMajorTileLoader {
    static constexpr int STRIDE = sgemm_k_major_stride(BK);
    static constexpr int STAGE_FLOATS = BX * STRIDE;
    static constexpr int VECS_PER_ROW = BK / 4;
    // May exceed BX: then some threads idle (not in today's space, whose B places hold at
    // least 64 rows, and whose blocks copy at most 64 rows a pass).
    static constexpr int ROWS_PER_PASS = THREADS / VECS_PER_ROW;
    static constexpr int PASSES = (BX + ROWS_PER_PASS - 1) / ROWS_PER_PASS;
    static_assert(BK % 4 == 0 && THREADS % VECS_PER_ROW == 0, "a pass covers whole rows of the tile");

    const float* src;  // this thread's first element of the next tile
    int kq;            // the k of its vector within the tile
    int rows_left;     // rows of the matrix from this thread's pass-0 row on
    int dst;           // its offset in Xs
    bool vec;          // 16-byte copies are legal

    __device__ SgemmKMajorTileLoader(const float* X, int ld, int x0, int extent, int k_first) {
        const int row = threadIdx.x / VECS_PER_ROW;
        kq = threadIdx.x % VECS_PER_ROW * 4;
        rows_left = min(extent - x0, BX) - row;
        vec = ALIGNED || sgemm_vec4_ok(X, ld);
        src = X + sgemm_offset(x0 + row, k_first + kq, ld);
        dst = row * STRIDE + kq;
    }

    template <bool CHECKED>
    __device__ __forceinline__ void load(float* Xs, const float* X, int ld, int k0, int K) {
        const int inside_k = CHECKED ? min(max(K - k0 - kq, 0), 4) : 4;  // values of k inside the matrix
#pragma unroll
        for (int i = 0; i < PASSES; ++i) {
            // Rows past the tile (idle threads) or, checked, past the matrix are not copied.
            if ((BX % ROWS_PER_PASS != 0 || CHECKED) && i * ROWS_PER_PASS >= rows_left) break;
            const float* g = src + sgemm_offset(i * ROWS_PER_PASS, 0, ld);
            float* d = Xs + dst + i * ROWS_PER_PASS * STRIDE;
            if (vec) {
                sgemm_tile_copy16<EVICT_FIRST>(d, inside_k > 0 ? g : X, 4 * inside_k);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    sgemm_tile_copy4<EVICT_FIRST>(d + j, j < inside_k ? g + j : X, j < inside_k ? 4 : 0);
            }
        }
        src += BK;
    }
};

// T when PICK_T, else F (NVRTC has no <type_traits>).
template <bool PICK_T, class T, class F>
struct SgemmPick {
    using type = T;
};
template <class T, class F>
struct SgemmPick<false, T, F> {
    using type = F;
};

// Reads the TN values of x of 4 consecutive k: one float4 along k from each of the thread's
// x rows, TN/4 groups of 4 rows a strip apart.
template <int TN, int STRIP, int STRIDE>
__device__ __forceinline__ void sgemm_load_k_chunk(float (&c)[TN][4], const float* s) {
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(s + (j / 4 * STRIP + j % 4) * STRIDE);
        c[j][0] = v.x; c[j][1] = v.y; c[j][2] = v.z; c[j][3] = v.w;
    }
}

// Blocks start roughly in blockIdx order. Numbering C's tiles down columns within bands of
// SWIZZLE_ROWS tile rows keeps the blocks resident at one time on a few rows of A and a few
// columns of B, so each operand tile is fetched from DRAM once and then hit in L2.
constexpr int SGEMM_SWIZZLE_ROWS = 8;

__device__ __forceinline__ void sgemm_swizzle(int block, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
    const int band_blocks = SGEMM_SWIZZLE_ROWS * tiles_n;
    const int first_m = block / band_blocks * SGEMM_SWIZZLE_ROWS;
    const int band_rows = min(SGEMM_SWIZZLE_ROWS, tiles_m - first_m);
    const int in_band = block % band_blocks;
    tile_m = first_m + in_band % band_rows;
    tile_n = in_band / band_rows;
}

// The FFMAs go in a serpentine: each run of FFMAs shares one operand, and the next run
// starts on the operand the last one ended on, so consecutive FFMAs can read it from the
// operand reuse cache instead of the register file (whose bank conflicts stall dispatch).
// Runs go along rows (a[i] shared), except in tiles taller than wide with at least 8
// columns (16x8), where they go along columns. Which way suits a tile depends on how
// ptxas then allocates and schedules; the choice follows a static count over each tile
// shape's hot loop in SASS (the stall cycles ptxas encodes plus the bank conflicts the
// reuse cache leaves), which ranked the orders as the H200 measured them. Against plain
// row-major order: 4096^3 90.0% to 93.1% of cuBLAS for the default 16x8 tile, 91.7% to
// 94.7% for 8x16, 4095x4097x4093 91.6% to 94.4%, 1024^3 with 8x4 tiles 2% faster
// (docs/RESULTS.md).
template <int TM, int TN>
__device__ __forceinline__ void sgemm_outer_product(float (&acc)[TM][TN], const float (&a)[TM], const float (&b)[TN]) {
    if (TN >= TM || TN < 8) {
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int step = 0; step < TN; ++step) {
                const int j = i % 2 ? TN - 1 - step : step;
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
            }
    } else {
#pragma unroll
        for (int j = 0; j < TN; ++j)
#pragma unroll
            for (int step = 0; step < TM; ++step) {
                const int i = j % 2 ? TM - 1 - step : step;
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
            }
    }
}

// Reads one k's fragments: TM/4 float4s of A a strip apart, TN/4 of B.
template <int N, int STRIP>
__device__ __forceinline__ void sgemm_load_fragment(float (&f)[N], const float* s) {
#pragma unroll
    for (int g = 0; g < N / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(s + g * STRIP);
        f[4 * g] = v.x; f[4 * g + 1] = v.y; f[4 * g + 2] = v.z; f[4 * g + 3] = v.w;
    }
}

// One block's view of a configuration: its operands in the tile's A and B places, its
// shared-memory stages, where its threads sit, and the steps both kernels below are made of.
// Every method is inlined, so each kernel compiles as if written out in one piece.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int TA, int TB, int WK, int CT, int ALIGNED,
          int KMAJOR>
struct SgemmWarptileBlock {
    static constexpr int WARPS_N = BN / WN;
    static constexpr int GROUP_THREADS = (BM / WM) * WARPS_N * 32;  // one group of warps covers the block tile
    static constexpr int THREADS = GROUP_THREADS * WK;
    static constexpr int GROUP_K = BK / WK;                          // values of k per tile for each group
    static constexpr int LANES_M = WM / TM, LANES_N = WN / TN;  // a warp's lanes form LANES_M x LANES_N
    static constexpr int STRIP_M = 4 * (WM / TM);
    static constexpr int STRIP_N = 4 * LANES_N;
    static constexpr int QUADS = TM * TN / 4;  // a thread's accumulators as float4s
    static_assert((WM / TM) * LANES_N == 32 && TM % 4 == 0 && TN % 4 == 0, "a warp's 32 lanes cover its tile");
    static_assert(STAGES >= 2, "the pipeline needs a stage to compute on and one to fill");
    static_assert(BK % WK == 0 && GROUP_K >= 2, "each group of warps takes a run of at least 2 k per tile");
    static_assert(!KMAJOR || (!sgemm_warptile_b_k_rows(TA, TB, CT) && GROUP_K % 8 == 0),
                  "KMAJOR keeps rows of x in B's place, read 4 k at a time in two alternating buffers");
    // B, the weights in decoding, is the one fetched under the evict-first policy.
    // Staged operands (ALIGNED = 2) take 16-byte copies as surely as aligned ones.
    using ATile = SgemmTileLoader<sgemm_warptile_a_k_rows(TA, TB, CT), BM, BK, THREADS, CT == 1, ALIGNED != 0>;
    using BTile = typename SgemmPick<KMAJOR == 1, SgemmKMajorTileLoader<BN, BK, THREADS, CT == 0, ALIGNED != 0>,
                                     SgemmTileLoader<sgemm_warptile_b_k_rows(TA, TB, CT), BN, BK, THREADS, CT == 0,
                                                     ALIGNED != 0>>::type;
    static constexpr int A_STAGE = ATile::STAGE_FLOATS;
    static constexpr int B_STAGE = BTile::STAGE_FLOATS;
    using Accumulators = float[TM][TN];

    const SgemmArgs& p;
    // The operands in the tile's A and B places, and the extents of the C (or C^T) they make.
    const float* const A;
    const float* const B;
    const int lda, ldb, M, N;
    float* const As;  // [STAGES][BK][ATile::STRIDE]
    float* const Bs;  // [STAGES][BK][BTile::STRIDE], with KMAJOR [STAGES][BN][BTile::STRIDE]
    // The thread's place in its warp's LANES_M x LANES_N lanes. KMAJOR numbers the lanes down
    // the columns, so that the 8 lanes of an LDS.128 phase read B's rows of k from at most two
    // columns of lanes (rows 4 apart, whose padded rows start 16 banks apart) and A's float4s
    // from consecutive places: no bank conflicts either way. Otherwise along the rows.
    const int group, group_thread, warp, lane_m, lane_n;

    __device__ __forceinline__ SgemmWarptileBlock(const SgemmArgs& args, float* smem)
        : p(args),
          A(CT ? args.B : args.A),
          B(CT ? args.A : args.B),
          lda(CT ? args.ldb : args.lda),
          ldb(CT ? args.lda : args.ldb),
          M(CT ? args.N : args.M),
          N(CT ? args.M : args.N),
          As(smem),
          Bs(smem + STAGES * A_STAGE),
          group(threadIdx.x / GROUP_THREADS),
          group_thread(threadIdx.x % GROUP_THREADS),
          warp(group_thread / 32),
          lane_m(KMAJOR ? threadIdx.x % 32 % LANES_M : threadIdx.x % 32 / LANES_N),
          lane_n(KMAJOR ? threadIdx.x % 32 / LANES_M : threadIdx.x % 32 % LANES_N) {}

    __device__ __forceinline__ int tiles_m() const { return (M + BM - 1) / BM; }
    __device__ __forceinline__ int tiles_n() const { return (N + BN - 1) / BN; }
    __device__ __forceinline__ int k_tiles() const { return (p.K + BK - 1) / BK; }

    // Adds the products of k tiles first_tile .. first_tile + tiles - 1 of the block tile at
    // (m0, n0) to acc. It leaves copies pending (empty groups, or none) and no barrier after
    // the last reads of the stages: before the stages are filled again, wait for the copies
    // and synchronise.
    __device__ __forceinline__ void accumulate(int m0, int n0, int first_tile, int tiles, Accumulators& acc) const {
        const bool interior = m0 + BM <= M && n0 + BN <= N;  // then only the last k tile needs checks
        ATile a_tile(A, lda, m0, M, first_tile * BK);
        BTile b_tile(B, ldb, n0, N, first_tile * BK);
        // Tiles must be loaded in order t = 0, 1, ...: the loaders walk along k.
        auto load_tile = [&](int stage, int t) {
            const int k0 = (first_tile + t) * BK;
            float* as = As + stage * A_STAGE;
            float* bs = Bs + stage * B_STAGE;
            if (interior && k0 + BK <= p.K) {
                a_tile.template load<false>(as, A, lda, k0, p.K);
                b_tile.template load<false>(bs, B, ldb, k0, p.K);
            } else {
                a_tile.template load<true>(as, A, lda, k0, p.K);
                b_tile.template load<true>(bs, B, ldb, k0, p.K);
            }
        };

        const int group_k0 = group * GROUP_K;
        const float* const a_frag_src = As + group_k0 * ATile::STRIDE + (warp / WARPS_N) * WM + lane_m * 4;
        const int b_x = (warp % WARPS_N) * WN + lane_n * 4;  // the thread's first column of B's place
        const float* const b_frag_src = KMAJOR ? Bs + b_x * BTile::STRIDE + group_k0 : Bs + group_k0 * BTile::STRIDE + b_x;
        float a_frag[2][TM], b_frag[2][TN];
        // KMAJOR: B's values of 4 consecutive k at a time, in two buffers that alternate.
        float b_chunk[2][TN][4];
        auto load_b = [&](int buffer, const float* src) {
            if (KMAJOR)
                sgemm_load_k_chunk<TN, STRIP_N, BTile::STRIDE>(b_chunk[buffer / 4 % 2], src);
            else
                sgemm_load_fragment<TN, STRIP_N>(b_frag[buffer % 2], src);
        };

        // Fill all stages but one; each tile is one commit group, so "tile t has landed" is
        // "at most STAGES-2 groups are pending" once the group of tile t+STAGES-2 is committed.
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < tiles) load_tile(s, s);
            sgemm_cp_async_commit();
        }
        sgemm_cp_async_wait<STAGES - 2>();
        __syncthreads();
        int read_stage = 0, write_stage = STAGES - 1;
        sgemm_load_fragment<TM, STRIP_M>(a_frag[0], a_frag_src);
        load_b(0, b_frag_src);

#pragma unroll 1
        for (int t = 0; t < tiles; ++t) {
#pragma unroll
            for (int k = 0; k < GROUP_K; ++k) {
                if (k == GROUP_K - 1) {
                    // The next tile's first fragments are read below: wait until it has landed
                    // and every thread's copies of it are visible. Past this barrier no thread
                    // reads the stage of tile t, which tile t+STAGES refills.
                    sgemm_cp_async_wait<STAGES - 2>();
                    __syncthreads();
                    read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
                }
                const int next_k = (k + 1) % GROUP_K;
                sgemm_load_fragment<TM, STRIP_M>(a_frag[(k + 1) % 2], a_frag_src + read_stage * A_STAGE + next_k * ATile::STRIDE);
                if (!KMAJOR)
                    load_b(next_k, b_frag_src + read_stage * B_STAGE + next_k * BTile::STRIDE);
                else if (next_k % 4 == 0)
                    load_b(next_k, b_frag_src + read_stage * B_STAGE + next_k);
                if (k == 0) {
                    // The stage of tile t-1 is free: every thread passed the barrier after its
                    // last read. An empty group keeps the count uniform near the end of k.
                    if (t + STAGES - 1 < tiles) load_tile(write_stage, t + STAGES - 1);
                    sgemm_cp_async_commit();
                    write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
                }
                if (KMAJOR) {
                    float b_now[TN];
#pragma unroll
                    for (int j = 0; j < TN; ++j) b_now[j] = b_chunk[k / 4 % 2][j][k % 4];
                    sgemm_outer_product<TM, TN>(acc, a_frag[k % 2], b_now);
                } else {
                    sgemm_outer_product<TM, TN>(acc, a_frag[k % 2], b_frag[k % 2]);
                }
            }
        }
    }

    // WK > 1: sums the groups' accumulators into group 0's. Every group's copies have landed
    // and no warp reads a stage any more: the stages' memory takes groups 1 .. WK-1's tiles,
    // each thread's quads GROUP_THREADS apart (consecutive threads, consecutive float4s: no
    // bank conflicts). Group 0 adds them in group order, so results repeat bit for bit.
    __device__ __forceinline__ void sum_groups(Accumulators& acc) const {
        float4* const partials = reinterpret_cast<float4*>(As);
        sgemm_cp_async_wait<0>();
        __syncthreads();
        if (group > 0)
#pragma unroll
            for (int q = 0; q < QUADS; ++q) partials[((group - 1) * QUADS + q) * GROUP_THREADS + group_thread] = quad(acc, q);
        __syncthreads();
        if (group == 0)
#pragma unroll 1
            for (int other = 1; other < WK; ++other)
#pragma unroll
                for (int q = 0; q < QUADS; ++q) add_quad(acc, q, partials[((other - 1) * QUADS + q) * GROUP_THREADS + group_thread]);
    }

    // A thread's accumulators as float4s: quad q is row q / (TN/4), columns 4 (q % (TN/4)) .. +3.
    static __device__ __forceinline__ float4 quad(const Accumulators& acc, int q) {
        const int i = q / (TN / 4), j = 4 * (q % (TN / 4));
        return make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
    }
    static __device__ __forceinline__ void add_quad(Accumulators& acc, int q, float4 v) {
        const int i = q / (TN / 4), j = 4 * (q % (TN / 4));
        acc[i][j] += v.x; acc[i][j + 1] += v.y; acc[i][j + 2] += v.z; acc[i][j + 3] += v.w;
    }

    // Calls store(row, column, float4) for the thread's accumulators of the tile at (m0, n0) as
    // float4s along rows of C. The thread's element (i, j) lies at row row0 + (i/4)*STRIP_M + i%4,
    // column col0 + (j/4)*STRIP_N + j%4 of the tile's matrix (C, or C^T with CT). With CT a
    // float4 gathers 4 consecutive i of one j, which are 4 consecutive columns of one row of C.
    template <class Store>
    __device__ __forceinline__ void for_each_c_quad(const Accumulators& acc, int m0, int n0, Store&& store) const {
        const int row0 = m0 + (warp / WARPS_N) * WM + lane_m * 4;
        const int col0 = n0 + (warp % WARPS_N) * WN + lane_n * 4;
        auto row = [&](int i) { return row0 + i / 4 * STRIP_M + i % 4; };
        auto col = [&](int g) { return col0 + g * STRIP_N; };
        if (CT) {
#pragma unroll
            for (int i = 0; i < TM; i += 4)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    store(col(j / 4) + j % 4, row(i), make_float4(acc[i][j], acc[i + 1][j], acc[i + 2][j], acc[i + 3][j]));
        } else {
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int g = 0; g < TN / 4; ++g) store(row(i), col(g), quad(acc, i * (TN / 4) + g));
        }
    }

    // Whether C takes 16-byte accesses (sgemm_vec4_ok): staging (ALIGNED = 2) leaves C where it is.
    __device__ __forceinline__ bool c_takes_vec4() const { return ALIGNED == 1 || sgemm_vec4_ok(p.C, p.ldc); }

    // Writes the tile at (m0, n0) of C through the epilogue (alpha, beta); c_vec: c_takes_vec4().
    __device__ __forceinline__ void store_c(const Accumulators& acc, int m0, int n0, bool c_vec) const {
        for_each_c_quad(acc, m0, n0, [&](int r, int c, float4 v) { sgemm_store4(p, r, c, v, c_vec); });
    }

    // Adds alpha * acc into the tile at (m0, n0) of C (a later slice's turn of
    // SGEMM_SUM_IN_ORDER), CHUNK quads at a time: their loads of C all in flight at once, then
    // their stores. The quads are visited in the same order by every pass (each pass keeps
    // only its chunk), so old[] is registers; a chunk of 8 needs 32 of them, few enough for
    // 16x8 thread tiles (all 32 quads at once spilled them).
    __device__ __forceinline__ void add_into_c(const Accumulators& acc, int m0, int n0, bool c_vec) const {
        constexpr int QUADS = TM * TN / 4, CHUNK = QUADS < 8 ? QUADS : 8;
#pragma unroll
        for (int first = 0; first < QUADS; first += CHUNK) {
            float4 old[CHUNK];
            int q = 0;
            for_each_c_quad(acc, m0, n0, [&](int r, int c, float4) {
                if (q >= first && q < first + CHUNK) old[q - first] = sgemm_splitk_in_order_load4(p, r, c, c_vec);
                ++q;
            });
            q = 0;
            for_each_c_quad(acc, m0, n0, [&](int r, int c, float4 v) {
                if (q >= first && q < first + CHUNK) sgemm_splitk_in_order_store4(p, r, c, v, old[q - first], c_vec);
                ++q;
            });
        }
    }
};

// The grid is (tiles of C, k slices): blockIdx.x numbers the tile (swizzled), blockIdx.y the
// slice. A launch may cover only the first gridDim.x tiles, leaving the rest to the stream-K
// tail (sgemm_warptile_stream_k). Dynamic shared memory: sgemm_warptile_shared_bytes. One
// block per SM is all the launch bounds promise: left free, ptxas squeezes configurations
// that need a little over 128 registers into 128 (two 256-thread blocks per SM) and spills.
// With SPLIT_K, SUM_PASS says how the slices are summed (SGEMM_SUM_*): 1 leaves the sum to
// sgemm_warptile_sum_pass, launched after it; 2 adds each slice into C with atomics; 3 has
// the slices of a tile add into C in turn. With ALIGNED = 2 sgemm_warptile_stage has run
// first, and the kernel computes the call as sgemm_staged_view gives it.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int TA, int TB, int WK, bool SPLIT_K, int CT,
          int ALIGNED, int KMAJOR, int SUM_PASS>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * WK * 32, 1)
sgemm_warptile(const SgemmArgs call) {
    static_assert(SPLIT_K || !SUM_PASS, "only split-K has slices to sum");
    static_assert(SUM_PASS >= SGEMM_SUM_BY_LAST_BLOCK && SUM_PASS <= SGEMM_SUM_IN_ORDER, "SUM_PASS is 0 to 3");
    static_assert(ALIGNED != 2 || !SPLIT_K, "a staged launch's workspace holds the staged operands, not partials");
    const SgemmArgs p = ALIGNED == 2 ? sgemm_staged_view<TA, TB, CT, KMAJOR>(call) : call;
    using Block = SgemmWarptileBlock<BM, BN, BK, WM, WN, TM, TN, STAGES, TA, TB, WK, CT, ALIGNED, KMAJOR>;
    SgemmTimeline timeline;
    timeline.mark(SGEMM_MARK_START);
    extern __shared__ __align__(16) float smem[];
    const Block block(p, smem);

    int tile_m, tile_n;
    sgemm_swizzle(blockIdx.x, block.tiles_m(), block.tiles_n(), tile_m, tile_n);
    const int m0 = tile_m * BM, n0 = tile_n * BN;

    // This block's slice of k tiles; a late slice may be empty and then adds zeros.
    const int k_tiles = block.k_tiles();
    const int slice_tiles = (k_tiles + gridDim.y - 1) / gridDim.y;
    const int first_tile = blockIdx.y * slice_tiles;
    const int tiles = max(0, min(slice_tiles, k_tiles - first_tile));

    if (SPLIT_K && SUM_PASS == SGEMM_SUM_BY_ATOMICS) {
        // The block's tile as rows and columns of C, as the in-kernel finish takes it below.
        // (One helper for both gave ptxas other allocations of the unchanged split binaries.)
        const int c_row0 = CT ? n0 : m0, c_rows = CT ? BN : BM, c_col0 = CT ? m0 : n0, c_cols = CT ? BM : BN;
        sgemm_splitk_atomic_prepare<Block::THREADS>(p, blockIdx.x, c_row0, c_rows, c_col0, c_cols, block.c_takes_vec4());
    }

    float acc[TM][TN] = {};
    block.accumulate(m0, n0, first_tile, tiles, acc);
    timeline.mark(SGEMM_MARK_LOOP_END);
    if (WK > 1) block.sum_groups(acc);

    const bool c_vec = block.c_takes_vec4();
    if (SPLIT_K && SUM_PASS == SGEMM_SUM_BY_ATOMICS) {
        sgemm_splitk_atomic_wait(p, blockIdx.x);
        if (block.group == 0 && tiles > 0)  // an empty slice has nothing to add
            block.for_each_c_quad(acc, m0, n0, [&](int r, int c, float4 v) { sgemm_splitk_atomic_add4(p, r, c, v, c_vec); });
        timeline.mark(SGEMM_MARK_PARTIAL_STORED);
        sgemm_splitk_atomic_done(p, blockIdx.x);
        timeline.arrived(false);
        timeline.mark(SGEMM_MARK_END);
        timeline.store(p);
        return;
    }
    if (SPLIT_K && SUM_PASS == SGEMM_SUM_IN_ORDER) {
        sgemm_splitk_in_order_wait(p, blockIdx.x);
        if (block.group == 0 && blockIdx.y == 0) {
            block.store_c(acc, m0, n0, c_vec);
        } else if (block.group == 0 && tiles > 0) {  // an empty slice has nothing to add
            block.add_into_c(acc, m0, n0, c_vec);
        }
        timeline.mark(SGEMM_MARK_PARTIAL_STORED);
        sgemm_splitk_in_order_pass(p, blockIdx.x);
        timeline.arrived(false);
        timeline.mark(SGEMM_MARK_END);
        timeline.store(p);
        return;
    }
    if (SPLIT_K) {
        // Split-K: store this slice's partials; the block that arrives last sums the tile
        // (sgemm_splitk_finish4). Its accumulators are dead by then, so 16 float4 loads in
        // flight fit in about the registers the k loop needed: ptxas (sm_90) gives the 8x4
        // thread tiles 3 to 9 more, which leaves as many blocks per SM, the others no more.
        constexpr int QUADS_IN_FLIGHT = 16;
        const bool vec = sgemm_vec4_ok(sgemm_splitk_partials(p, 0), p.N);
        if (block.group == 0)
            block.for_each_c_quad(acc, m0, n0, [&](int r, int c, float4 v) { sgemm_splitk_store_partial4(p, blockIdx.y, r, c, v, vec); });
        timeline.mark(SGEMM_MARK_PARTIAL_STORED);
        if (SUM_PASS == SGEMM_SUM_BY_PASS) {
            timeline.mark(SGEMM_MARK_END);
            timeline.store(p);
            return;
        }
        // The block's tile as rows and columns of C.
        const int c_row0 = CT ? n0 : m0, c_rows = CT ? BN : BM, c_col0 = CT ? m0 : n0, c_cols = CT ? BM : BN;
        if (vec)
            sgemm_splitk_finish4<Block::THREADS, QUADS_IN_FLIGHT>(p, blockIdx.x, c_row0, c_rows, c_col0, c_cols, c_vec, timeline);
        else
            sgemm_splitk_finish<Block::THREADS>(p, blockIdx.x, c_row0, c_rows, c_col0, c_cols, timeline);
        timeline.mark(SGEMM_MARK_END);
        timeline.store(p);
        return;
    }
    if (block.group > 0) return;
    block.store_c(acc, m0, n0, c_vec);
    timeline.mark(SGEMM_MARK_END);
    timeline.store(p);
}

// The stream-K tail. When a launch's tiles leave its last wave part empty (4096^3 in 256x128
// tiles: 512 blocks for 132 SMs, the fourth wave 116 blocks with 16 SMs idle), the host
// launches sgemm_warptile over whole waves only, the first tiles - tiles % R tiles, R being
// the number of SMs, and this kernel over the rest. The k tiles of those last tiles, laid end
// to end (tile after tile, k in order within a tile), are cut into R runs of equal length,
// one per SM. A run is shorter than a tile, so it covers at most two parts of tiles: the
// last k tiles of one (its first part) and the first k tiles of the next (its head).
//
// The grid is 2R blocks, each one part. Blocks 0 .. R-1 are the heads: one wave that starts
// at k = 0 together, as the blocks of a whole wave do, so they share the operands' k window
// in L2. Blocks R .. 2R-1 are the first parts, and start as SMs free up, in block order; so
// the j-th of them takes the first part of the run with the j-th shortest head, and each SM
// works about one run in all. A whole tile a block writes to C. A part of a tile it stores
// in the workspace as partial accumulators, each thread its own quads THREADS apart
// (coalesced), then counts in on the tile (sgemm_splitk_arrive); the block that arrives last
// adds the tile's parts in run order, so results repeat bit for bit, and writes C. No block
// waits for another. The workspace holds two parts per run: sgemm_stream_k_workspace_bytes.
//
// One part per block, not a loop over a run's parts: on the H200 a block that looped over
// its run's parts ran 4096^3 at 93% of cuBLAS, this kernel at 97%, and the main kernel
// alone (no tail) at 98%. A separate kernel, not a path in sgemm_warptile, leaves the whole waves' loop
// as it was: carried in the same binary, stream-K code ran 4096^3 at 91.3% of cuBLAS against
// 98.2% (docs/RESULTS.md). This kernel takes sgemm_warptile's template arguments, so the host
// finds its symbol from the main kernel's.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int TA, int TB, int WK, bool SPLIT_K, int CT,
          int ALIGNED, int KMAJOR, int SUM_PASS>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * WK * 32, 1)
sgemm_warptile_stream_k(const SgemmArgs p) {
    static_assert(WK == 1 && !SPLIT_K && !SUM_PASS, "the stream-K tail shares k among blocks itself");
    static_assert(ALIGNED != 2, "a staged launch's workspace holds the staged operands, not partial tiles");
    using Block = SgemmWarptileBlock<BM, BN, BK, WM, WN, TM, TN, STAGES, TA, TB, WK, CT, ALIGNED, KMAJOR>;
    constexpr int PART = Block::QUADS * Block::THREADS;  // float4s in one partial tile
    extern __shared__ __align__(16) float smem[];
    const Block block(p, smem);

    const int runs = gridDim.x / 2;
    const int tiles_m = block.tiles_m(), tiles_n = block.tiles_n(), k_tiles = block.k_tiles();
    const int shared_tiles = tiles_m * tiles_n % runs, first_shared = tiles_m * tiles_n - shared_tiles;
    // Below 2^31: the host launches no tail where shared_tiles * K would reach it
    // (Family::stream_k_split), and k_tiles <= K.
    const int work = shared_tiles * k_tiles, run = (work + runs - 1) / runs;
    auto run_end = [&](int r) { return min((r + 1) * run, work); };
    auto head_begin = [&](int r) { return max(r * run, (run_end(r) - 1) / k_tiles * k_tiles); };

    int r, begin, end;  // this block's part: k iterations [begin, end) of run r
    if (blockIdx.x < runs) {
        r = blockIdx.x;
        begin = head_begin(r);
        end = run_end(r);
    } else {
        // Rank the runs by head length (ties by run): the j-th shortest is this block's.
        __shared__ int chosen;
        const int j = blockIdx.x - runs;
        for (int i = threadIdx.x; i < runs; i += blockDim.x) {
            const int head = run_end(i) - head_begin(i);
            int rank = 0;
            for (int l = 0; l < runs; ++l) {
                const int other = run_end(l) - head_begin(l);
                rank += other < head || (other == head && l < i);
            }
            if (rank == j) chosen = i;
        }
        __syncthreads();
        r = chosen;
        begin = r * run;
        end = head_begin(r);
    }
    if (begin >= end) return;  // a run inside one tile, or past the work

    const int t = begin / k_tiles, tile_begin = t * k_tiles, k0 = begin - tile_begin, k1 = end - tile_begin;
    int tile_m, tile_n;
    sgemm_swizzle(first_shared + t, tiles_m, tiles_n, tile_m, tile_n);
    const int m0 = tile_m * BM, n0 = tile_n * BN;
    float acc[TM][TN] = {};
    block.accumulate(m0, n0, k0, k1 - k0, acc);

    const bool c_vec = block.c_takes_vec4();
    if (k0 == 0 && k1 == k_tiles) {
        block.store_c(acc, m0, n0, c_vec);
        return;
    }
    // Run q's part of a tile sits in its first slot when the tile is where q begins.
    float4* const parts = reinterpret_cast<float4*>(static_cast<char*>(p.workspace) + SGEMM_WORKSPACE_COUNTER_BYTES);
    auto part_of = [&](int q) { return parts + (2 * q + (q * run >= tile_begin ? 0 : 1)) * PART + threadIdx.x; };
    float4* const mine = part_of(r);
#pragma unroll
    for (int q = 0; q < Block::QUADS; ++q) mine[q * Block::THREADS] = Block::quad(acc, q);
    const int first_run = tile_begin / run, last_run = (tile_begin + k_tiles - 1) / run;
    if (!sgemm_splitk_arrive(p, t, last_run - first_run + 1)) return;
    float sum[TM][TN] = {};
#pragma unroll 1
    for (int q = first_run; q <= last_run; ++q) {
        const float4* const part = part_of(q);
#pragma unroll
        for (int i = 0; i < Block::QUADS; ++i) Block::add_quad(sum, i, __ldcg(part + i * Block::THREADS));
    }
    block.store_c(sum, m0, n0, c_vec);
}

// The split-K sum as a second pass (SUM_PASS = 1; sgemm_splitk_sum_pass says when it pays).
// It takes sgemm_warptile's template arguments, like the stream-K tail, so the host finds
// its symbol from the main kernel's; of them only ALIGNED matters here.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int TA, int TB, int WK, bool SPLIT_K, int CT,
          int ALIGNED, int KMAJOR, int SUM_PASS>
__global__ void __launch_bounds__(SGEMM_SUM_PASS_QUADS * SGEMM_SUM_PASS_MAX_SLICES)
sgemm_warptile_sum_pass(const SgemmArgs p) {
    static_assert(SPLIT_K && SUM_PASS == SGEMM_SUM_BY_PASS,
                  "the sum pass sums the slices of a split launch that left them to it");
    sgemm_splitk_sum_pass(p, ALIGNED == 1 || sgemm_vec4_ok(p.C, p.ldc));
}

// The staging kernel of ALIGNED = 2 (sgemm_staging.cuh), launched before sgemm_warptile on
// the same stream when the call has something to stage (Family::stages_call): gridDim.y = 2,
// blocks of SGEMM_STAGE_THREADS. It takes sgemm_warptile's
// template arguments, like the stream-K tail, so the host finds its symbol from the main
// kernel's; of them TA, TB, CT and KMAJOR say what it copies.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int TA, int TB, int WK, bool SPLIT_K, int CT,
          int ALIGNED, int KMAJOR, int SUM_PASS>
__global__ void __launch_bounds__(SGEMM_STAGE_THREADS) sgemm_warptile_stage(const SgemmArgs p) {
    static_assert(ALIGNED == 2, "only a staged launch has operands to stage");
    if (blockIdx.y == 0)
        sgemm_stage_operands<TA, TB, CT, KMAJOR>(p);
    else
        sgemm_fringe_columns<TA, TB>(p);
}

#endif
