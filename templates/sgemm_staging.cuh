// Staged operands: warptile's ALIGNED = 2, for calls whose operands do not take 16-byte
// copies, such as 4095x4097x4093 with tight rows. The main kernel's loop then issues the
// same 16-byte copies as for aligned operands (ALIGNED = 1), with no 4-byte fallback compiled
// in, because a staging kernel launched before it in the same stream has made them legal:
//  - Each operand that the configuration copies 16 bytes at a time (stored as rows of k, or
//    kept as stored with KMAJOR) and whose rows do not take such copies is copied into the
//    workspace, each row padded to a multiple of 4 floats. Operands copied 4 bytes at a time
//    anyway (rows of x, transposed on the way) are read where they are.
//  - C's last N mod 4 columns (at most 3) are computed by the staging kernel as dot products,
//    and the main kernel computes the first N4 = N - N mod 4. Left to the main kernel, one
//    extra column makes a column of tiles of its own: 4097 columns in tiles 256 wide are 17
//    columns of tiles, 6% more blocks and a part-empty last wave for one column of C.
// C is written where it is; the main kernel tests it at run time, as with ALIGNED = 0.
//
// On the H200 at 4095x4097x4093 (NN), the tuner's best binary with the fallback ran at 94%
// of cuBLAS, and the 4096^3 winner (no fallback) took 2.66 ms on copies of the operands
// padded to 4096 columns, against cuBLAS's 2.88 ms for the call itself; a padding copy of one
// operand took 0.036 ms, and cuBLAS's own GEMV for the last column 0.035 ms (docs/RESULTS.md,
// thirty-ninth session).
#pragma once
#include "sgemm_common.cuh"
#include "sgemm_warptile_places.cuh"

// The columns of C the main kernel of a staged launch computes: the staging kernel computes
// the rest.
constexpr int sgemm_staged_n(int n) { return n - n % 4; }

// The leading dimension of a staged copy of rows `cols` floats long: a multiple of 4.
constexpr int sgemm_staged_ld(int cols) { return (cols + 3) / 4 * 4; }

// Bytes a staged copy of a rows x cols operand takes in the workspace, rounded up to 256 so
// that the next one starts on a 16-byte boundary too.
constexpr unsigned long long sgemm_staged_bytes(int rows, int cols) {
    return (4ull * rows * sgemm_staged_ld(cols) + 255) / 256 * 256;
}

// A and B as the main kernel reads them, as stored (sgemm_common.cuh): A is M x K, or K x M
// with TA; B is K x N4, or N4 x K with TB.
constexpr int sgemm_staged_a_rows(int ta, int M, int K) { return ta ? K : M; }
constexpr int sgemm_staged_a_cols(int ta, int M, int K) { return ta ? M : K; }
constexpr int sgemm_staged_b_rows(int tb, int N, int K) { return tb ? sgemm_staged_n(N) : K; }
constexpr int sgemm_staged_b_cols(int tb, int N, int K) { return tb ? K : sgemm_staged_n(N); }

// Whether a configuration copies operand A (B) 16 bytes at a time, so that a staged launch
// may copy it into the workspace: the loaders copy rows of k so, and with KMAJOR the rows of
// x in B's place too; CT = 1 puts B in the tile's A place and A in its B place.
constexpr bool sgemm_place_copies_16(bool a_place, int ta, int tb, int ct, int kmajor) {
    return a_place ? sgemm_warptile_a_k_rows(ta, tb, ct) : (kmajor || sgemm_warptile_b_k_rows(ta, tb, ct));
}
constexpr bool sgemm_stages_a(int ta, int tb, int ct, int kmajor) { return sgemm_place_copies_16(!ct, ta, tb, ct, kmajor); }
constexpr bool sgemm_stages_b(int ta, int tb, int ct, int kmajor) { return sgemm_place_copies_16(ct, ta, tb, ct, kmajor); }

// The workspace of a staged launch: the tile counters every workspace starts with
// (sgemm_common.cuh), then the copy of A, then that of B, each as large as it can be.
constexpr unsigned long long sgemm_staged_workspace_bytes(int ta, int tb, int ct, int kmajor, int M, int N, int K) {
    return SGEMM_WORKSPACE_COUNTER_BYTES +
           (sgemm_stages_a(ta, tb, ct, kmajor) ? sgemm_staged_bytes(sgemm_staged_a_rows(ta, M, K), sgemm_staged_a_cols(ta, M, K)) : 0) +
           (sgemm_stages_b(ta, tb, ct, kmajor) ? sgemm_staged_bytes(sgemm_staged_b_rows(tb, N, K), sgemm_staged_b_cols(tb, N, K)) : 0);
}

// The staging kernel's blocks: with blockIdx.y = 0 they copy operands, with 1 they compute the
// last columns of C. Each strides over its work, so any gridDim.x is right.
#define SGEMM_STAGE_THREADS 256
// The last columns: each warp takes 4 rows of C at a time, over k in chunks whose values of
// B are first gathered into dynamic shared memory, a float4 per k. Dynamic, so that the
// binary's static shared memory, which ptxas reports for it whole, stays the main kernel's.
#define SGEMM_FRINGE_ROWS_PER_WARP 4
#define SGEMM_FRINGE_K_CHUNK 1024
// A warp issues its loads of op(A) for SGEMM_FRINGE_STEPS steps of 32 k at once. At
// 4095x4097x4093 on the H200 that took the staged winner from 97.0% to 97.7% of cuBLAS with
// padded rows and from 101.6% to 102.1% with tight ones, against loads left to the compiler's
// unrolling; 2 rows a warp (twice the blocks) instead of 4 gained less (docs/RESULTS.md,
// forty-second session).
#define SGEMM_FRINGE_STEPS 8
#define SGEMM_STAGE_SHARED_BYTES (16 * SGEMM_FRINGE_K_CHUNK)

#if defined(__CUDACC__)

// Where a staged launch keeps its copy of A, then of B (sgemm_staged_workspace_bytes).
__device__ __forceinline__ float* sgemm_staged_a(const SgemmArgs& p) {
    return reinterpret_cast<float*>(static_cast<char*>(p.workspace) + SGEMM_WORKSPACE_COUNTER_BYTES);
}
template <int TA, int TB, int CT, int KMAJOR>
__device__ __forceinline__ float* sgemm_staged_b(const SgemmArgs& p) {
    const unsigned long long a_bytes =
        sgemm_stages_a(TA, TB, CT, KMAJOR)
            ? sgemm_staged_bytes(sgemm_staged_a_rows(TA, p.M, p.K), sgemm_staged_a_cols(TA, p.M, p.K))
            : 0;
    return reinterpret_cast<float*>(static_cast<char*>(p.workspace) + SGEMM_WORKSPACE_COUNTER_BYTES + a_bytes);
}

// Whether the staging kernel copies A (B) for this call: the configuration copies it 16 bytes
// at a time, and its rows do not take such copies where they are.
template <int TA, int TB, int CT, int KMAJOR>
__device__ __forceinline__ bool sgemm_copies_a(const SgemmArgs& p) {
    return sgemm_stages_a(TA, TB, CT, KMAJOR) && !sgemm_vec4_ok(p.A, p.lda);
}
template <int TA, int TB, int CT, int KMAJOR>
__device__ __forceinline__ bool sgemm_copies_b(const SgemmArgs& p) {
    return sgemm_stages_b(TA, TB, CT, KMAJOR) && !sgemm_vec4_ok(p.B, p.ldb);
}

// The call as the main kernel of a staged launch sees it: N4 columns of C, and the staged
// copies in place of the operands the staging kernel copied.
template <int TA, int TB, int CT, int KMAJOR>
__device__ __forceinline__ SgemmArgs sgemm_staged_view(SgemmArgs p) {
    if (sgemm_copies_a<TA, TB, CT, KMAJOR>(p)) {
        p.A = sgemm_staged_a(p);
        p.lda = sgemm_staged_ld(sgemm_staged_a_cols(TA, p.M, p.K));
    }
    if (sgemm_copies_b<TA, TB, CT, KMAJOR>(p)) {
        p.B = sgemm_staged_b<TA, TB, CT, KMAJOR>(p);
        p.ldb = sgemm_staged_ld(sgemm_staged_b_cols(TB, p.N, p.K));
    }
    p.N = sgemm_staged_n(p.N);
    return p;
}

// Copies rows [first, rows) of a rows x cols matrix, every `step`-th, into dst with leading
// dimension dst_ld; each thread's loads go out 4 at a time, before their stores.
__device__ __forceinline__ void sgemm_stage_rows(const float* __restrict__ src, int ld, int rows, int cols,
                                                 float* __restrict__ dst, int dst_ld, int first, int step) {
    constexpr int UNROLL = 4;
    for (int r = first; r < rows; r += step) {
        const float* s = src + sgemm_offset(r, 0, ld);
        float* d = dst + sgemm_offset(r, 0, dst_ld);
        for (int c0 = threadIdx.x; c0 < cols; c0 += UNROLL * SGEMM_STAGE_THREADS) {
            float v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const int c = c0 + u * SGEMM_STAGE_THREADS;
                v[u] = c < cols ? s[c] : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const int c = c0 + u * SGEMM_STAGE_THREADS;
                if (c < cols) d[c] = v[u];
            }
        }
    }
}

// blockIdx.y = 0: the copies, rows of A then rows of B spread over the blocks.
template <int TA, int TB, int CT, int KMAJOR>
__device__ __forceinline__ void sgemm_stage_operands(const SgemmArgs& p) {
    const int a_rows = sgemm_copies_a<TA, TB, CT, KMAJOR>(p) ? sgemm_staged_a_rows(TA, p.M, p.K) : 0;
    const int b_rows = sgemm_copies_b<TA, TB, CT, KMAJOR>(p) ? sgemm_staged_b_rows(TB, p.N, p.K) : 0;
    if (a_rows > 0) {
        const int cols = sgemm_staged_a_cols(TA, p.M, p.K);
        sgemm_stage_rows(p.A, p.lda, a_rows, cols, sgemm_staged_a(p), sgemm_staged_ld(cols),
                         blockIdx.x, gridDim.x);
    }
    if (b_rows > 0) {
        const int cols = sgemm_staged_b_cols(TB, p.N, p.K);
        // B's rows start at the block after the one that took A's last row, so that each
        // block copies about as many rows in all.
        const int first = ((int)blockIdx.x - a_rows % (int)gridDim.x + (int)gridDim.x) % (int)gridDim.x;
        sgemm_stage_rows(p.B, p.ldb, b_rows, cols, sgemm_staged_b<TA, TB, CT, KMAJOR>(p), sgemm_staged_ld(cols),
                         first, gridDim.x);
    }
}

// blockIdx.y = 1: C's columns N4 .. N-1, C = alpha * op(A) op(B) + beta * C as the main kernel
// writes the rest (sgemm_store: beta = 0 never reads C). A block takes SGEMM_STAGE_THREADS / 32
// warps of SGEMM_FRINGE_ROWS_PER_WARP rows; for each chunk of k it gathers those columns of
// op(B) into shared memory, a float4 per k, and each warp's lanes stride along k over its rows
// of op(A) (consecutive addresses when A is stored M x K), then sum across the warp. Both
// issue all of a step's loads before using any: a GEMV streams op(A), and only many loads in
// flight keep that near the memory's rate.
template <int TA, int TB>
__device__ __forceinline__ void sgemm_fringe_columns(const SgemmArgs& p) {
    const int n4 = sgemm_staged_n(p.N), cols = p.N - n4;
    if (cols == 0) return;
    constexpr int ROWS = SGEMM_FRINGE_ROWS_PER_WARP, CHUNK = SGEMM_FRINGE_K_CHUNK, STEPS = SGEMM_FRINGE_STEPS;
    constexpr int BLOCK_ROWS = SGEMM_STAGE_THREADS / 32 * ROWS, GATHER = CHUNK / SGEMM_STAGE_THREADS;
    static_assert(CHUNK % SGEMM_STAGE_THREADS == 0 && CHUNK % (32 * STEPS) == 0, "steps and gathers tile the chunk");
    extern __shared__ float4 b_chunk[];  // [CHUNK]
    const int lane = threadIdx.x % 32;
    auto a_at = [&](int m, int k) { return TA ? p.A[sgemm_offset(k, m, p.lda)] : p.A[sgemm_offset(m, k, p.lda)]; };
    auto b_at = [&](int k, int n) { return TB ? p.B[sgemm_offset(n, k, p.ldb)] : p.B[sgemm_offset(k, n, p.ldb)]; };
    // Block-uniform loops: every thread meets every barrier.
    for (long long block_m = 1ll * blockIdx.x * BLOCK_ROWS; block_m < p.M; block_m += 1ll * gridDim.x * BLOCK_ROWS) {
        const int m0 = static_cast<int>(block_m) + threadIdx.x / 32 * ROWS;
        float acc[ROWS][3] = {};
        for (int k0 = 0; k0 < p.K; k0 += CHUNK) {
            const int chunk = min(CHUNK, p.K - k0);
            __syncthreads();  // the previous chunk's reads are done
            float4 gathered[GATHER];
#pragma unroll
            for (int g = 0; g < GATHER; ++g) {
                const int kk = threadIdx.x + g * SGEMM_STAGE_THREADS;
                gathered[g] = kk < chunk ? make_float4(b_at(k0 + kk, n4), cols > 1 ? b_at(k0 + kk, n4 + 1) : 0.0f,
                                                       cols > 2 ? b_at(k0 + kk, n4 + 2) : 0.0f, 0.0f)
                                         : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
#pragma unroll
            for (int g = 0; g < GATHER; ++g) b_chunk[threadIdx.x + g * SGEMM_STAGE_THREADS] = gathered[g];
            __syncthreads();
            for (int kk0 = 0; kk0 < chunk; kk0 += 32 * STEPS) {
                float a[ROWS][STEPS];
#pragma unroll
                for (int i = 0; i < ROWS; ++i)
#pragma unroll
                    for (int u = 0; u < STEPS; ++u) {
                        const int kk = kk0 + u * 32 + lane;
                        a[i][u] = kk < chunk && m0 + i < p.M ? a_at(m0 + i, k0 + kk) : 0.0f;
                    }
#pragma unroll
                for (int u = 0; u < STEPS; ++u) {
                    const float4 b = b_chunk[kk0 + u * 32 + lane];  // zeros past the chunk
#pragma unroll
                    for (int i = 0; i < ROWS; ++i) {
                        acc[i][0] = fmaf(a[i][u], b.x, acc[i][0]);
                        acc[i][1] = fmaf(a[i][u], b.y, acc[i][1]);
                        acc[i][2] = fmaf(a[i][u], b.z, acc[i][2]);
                    }
                }
            }
        }
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
#pragma unroll
            for (int j = 0; j < 3; ++j) {
#pragma unroll
                for (int offset = 16; offset > 0; offset /= 2) acc[i][j] += __shfl_xor_sync(0xffffffffu, acc[i][j], offset);
                if (lane == 0 && j < cols && m0 + i < p.M) sgemm_store(p, m0 + i, n4 + j, acc[i][j]);
            }
    }
}

#endif
