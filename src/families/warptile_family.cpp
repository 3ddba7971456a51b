#include "src/families/warptile_family.h"

#include "src/util/text.h"
#include "templates/sgemm_staging.cuh"
#include "templates/sgemm_warptile.cuh"

namespace sgemm {
namespace {

struct WarptileShape {
    int bm, bn, bk, wm, wn, tm, tn, stages, ta, tb, wk, splits, ct, sk, aligned, kmajor, sum_pass;
    int tile_warps() const { return (bm / wm) * (bn / wn); }  // one group of warps, covering the block tile
    int threads() const { return 32 * tile_warps() * wk; }
    unsigned shared_bytes() const { return sgemm_warptile_shared_bytes(bm, bn, bk, stages, ta, tb, wk, ct, kmajor); }
    // The extents of the matrix the block tiles cover: C, or C^T with CT; staged (ALIGNED = 2),
    // the staging kernel computes C's last N mod 4 columns.
    int covered_n(int N) const { return aligned == 2 ? sgemm_staged_n(N) : N; }
    int tiled_rows(int M, int N) const { return ct ? covered_n(N) : M; }
    int tiled_cols(int M, int N) const { return ct ? M : covered_n(N); }
    // Accumulators, the two register buffers of fragments, and about 40 for addresses and
    // loop state. ptxas (CUDA 13.0) gave the 920 tiles with WK = 1 of the space below 96 to 249
    // registers on sm_90 and 92 to 251 on sm_80, none spilling, when one binary per tile
    // held the split-K code too (second session; now each tile has two binaries).
    // KMAJOR holds B's values of 4 k in two buffers: 8 TN registers, not 2 TN.
    int estimated_registers() const { return tm * tn + 2 * (tm + tn) + (kmajor ? 6 * tn : 0) + 40; }
};

WarptileShape warptile_shape(const Family& f, const ParamValues& v) {
    return {f.value(v, "BM"), f.value(v, "BN"), f.value(v, "BK"),     f.value(v, "WM"),
            f.value(v, "WN"), f.value(v, "TM"), f.value(v, "TN"),     f.value(v, "STAGES"),
            f.value(v, "TA"), f.value(v, "TB"), f.value(v, "WK"),     f.value(v, "SPLITS"),
            f.value(v, "CT"), f.value(v, "SK"),     f.value(v, "ALIGNED"), f.value(v, "KMAJOR"),
            f.value(v, "SUM_PASS")};
}

std::string warptile_violation(const WarptileShape& s, const ArchLimits& lim) {
    if (s.wm % s.tm || s.wn % s.tn || (s.wm / s.tm) * (s.wn / s.tn) != 32)
        return "a " + std::to_string(s.wm) + "x" + std::to_string(s.wn) + " warp tile with " + std::to_string(s.tm) +
               "x" + std::to_string(s.tn) + " per thread does not give each of a warp's 32 lanes one thread tile";
    if (s.wm / s.tm != 4 && s.wm / s.tm != 8)
        return "a warp's lanes must form 4 x 8 or 8 x 4 thread tiles, so that an LDS.128 of fragments reads at "
               "most 128 distinct bytes";
    if (s.bm % s.wm || s.bn % s.wn) return "BM must be a multiple of WM and BN of WN";
    if (s.ct && (s.ta || s.tb))
        return "CT = 1 (tiles of C^T) serves only NN, where it moves A's transposing copies to the tile's BN side; "
               "TN has no such copies, and for NT and TT it was not measured to help";
    if (s.kmajor && sgemm_warptile_b_k_rows(s.ta, s.tb, s.ct))
        return "KMAJOR = 1 keeps an operand stored as rows of x (B with TB = 1, or A as tiles of C^T) as it is; "
               "B's place here holds rows of k, which are copied as they are anyway";
    // On the H200 NT's weights at batch 32 streamed 15-21% faster with both than with BK 16
    // and 4-byte copies; KMAJOR with BK 16 moved them -3% to +5%, and BK 32 alone was slower.
    if ((s.bk == 32) != (s.kmajor == 1))
        return "BK 32 and KMAJOR = 1 go together: each row of x is then copied 128 bytes a tile, 16 at a time; "
               "apart, neither was measured faster on the H200";
    if (s.kmajor && (s.bk / s.wk) % 8)
        return "KMAJOR = 1 reads B's place 4 k at a time into two alternating buffers: each group of warps needs a "
               "multiple of 8 k per tile";
    if (s.sum_pass && s.splits == 1)
        return "SUM_PASS = " + std::to_string(s.sum_pass) + " sums the slices of a split launch " +
               (s.sum_pass == SGEMM_SUM_BY_PASS      ? "in a second kernel"
                : s.sum_pass == SGEMM_SUM_BY_ATOMICS ? "by atomics into C"
                                                     : "by turns on C") +
               ": it goes with SPLITS > 1";
    // The split counts above 8 are for a batch-32 decode GEMM with few tiles and a long k
    // (down: 4096x14336), where on the H200 16 slices summed by the pass ran 4% faster than
    // the best split of 8 (docs/RESULTS.md, thirty-second session). Summed in the kernel they
    // were not measured; allowed, they led the cost model's ranking at 4096^3 (12 slices
    // fill the last wave better), where their partials would be 800 MB.
    if (s.splits > 8 && s.sum_pass == SGEMM_SUM_BY_LAST_BLOCK)
        return "SPLITS " + std::to_string(s.splits) + " goes with SUM_PASS = 1, 2 or 3: more than 8 slices are summed "
               "by the second kernel, added by atomics or by turns, not by one block per tile";
    if (s.aligned == 2 && (s.splits > 1 || s.sk))
        return "ALIGNED = 2 (staged operands) goes with SPLITS = 1 and SK = 0: the workspace holds the staged copies";
    if (s.sk && (s.splits > 1 || s.wk > 1))
        return "SK = 1 (a stream-K tail) shares k among blocks itself: it goes with SPLITS = 1 and WK = 1";
    // The tail kernel holds the tile's accumulators and the part bookkeeping at once: ptxas
    // (CUDA 13.0) gives it 254-255 registers with 16x8 or 8x16 thread tiles, and for tiles
    // of C^T spills 12 bytes on sm_80, sm_86 and sm_89 (none on sm_90 and sm_100).
    if (s.sk && s.ct && s.tm * s.tn >= 128 && lim.sm < 90)
        return "SK = 1 with CT = 1 and " + std::to_string(s.tm) + "x" + std::to_string(s.tn) +
               " thread tiles: the stream-K tail spills before sm_90";
    if (s.wk > 1 && s.tile_warps() * s.wk > 8)
        return "WK > 1 is for small grids: groups of warps share a tile's k only in blocks of at most 8 warps";
    // Each group's fragments alternate between two register buffers from one k to the next,
    // across tiles too: a group's run of k must have an even length.
    if (s.bk % s.wk || (s.bk / s.wk) % 2)
        return "BK " + std::to_string(s.bk) + " does not split into " + std::to_string(s.wk) +
               " runs of k of even length, one per group of warps";
    if ((s.stages - 1) * s.bk < 16)
        return "STAGES-1 tiles in flight hold " + std::to_string((s.stages - 1) * s.bk) +
               " k; at least 16 are needed for the copies to land while the block computes";
    const int registers = s.estimated_registers();
    if (registers > lim.max_registers_per_thread || s.threads() * registers > lim.registers_per_sm)
        return std::to_string(s.threads()) + " threads of about " + std::to_string(registers) +
               " registers each (" + std::to_string(s.tm * s.tn) + " accumulators) do not fit one SM";
    if (static_cast<int>(s.shared_bytes()) > lim.max_shared_per_block)
        return std::to_string(s.stages) + " stages need " + std::to_string(s.shared_bytes()) +
               " bytes of shared memory; the limit is " + std::to_string(lim.max_shared_per_block);
    return "";
}

}  // namespace

Family warptile_family() {
    Family f;
    f.name = "warptile";
    f.host_source = base_name(__FILE__);
    f.summary = "block/warp/thread tiles, 2-4 stage cp.async pipeline, NN/NT/TN/TT (NN also as tiles of C^T), "
                "split-K for small grids (summed in-kernel, by a second pass or by turns on C, or added by atomics), "
                "a stream-K tail for a part-empty last wave";
    f.template_file = "sgemm_warptile.cuh";
    f.kernel = "sgemm_warptile";
    f.tail_kernel = "sgemm_warptile_stream_k";
    f.sum_pass_kernel = "sgemm_warptile_sum_pass";
    f.stage_kernel = "sgemm_warptile_stage";
    // Warp tiles are 32 or 64 on a side, their lanes 4 x 8 or 8 x 4 thread tiles (32x64 with
    // 8x8, 64x64 with 16x8 or 8x16, 32x32 with 8x4, 64x32 with 8x8 or 16x4), so LDS.128s of
    // fragments read at most 128 distinct bytes. The small ones give small grids (1024^3,
    // batch 32) more warps per scheduler.
    // CT = 1 (tiles of C^T, for NN only) is described in the template.
    // BM 32 is one row of warps: a batch-32 decode GEMM in a single tile row, so every weight
    // is read once. Split counts of 3 and 6 fit the tile counts of such shapes to 132 SMs
    // where powers of two do not; 12 and 16, with the sum pass or atomics, give a narrow C with a
    // long k (down at batch 32) the blocks to fill it. WK = 2 splits each k tile between two
    // groups of warps (sgemm_warptile.cuh): the same grid with twice the warps per SM. WK = 4
    // was slower than 2 on every batch-32 shape measured on the H200 (docs/RESULTS.md).
    // SK = 1 gives the tiles of a last, part-empty wave to a stream-K tail (the template's
    // sgemm_warptile_stream_k), so every SM works to the end.
    // ALIGNED = 1 leaves out the 4-byte fallback of the 16-byte accesses, for calls whose
    // operands are all 16-byte aligned (the template says what it gains); ALIGNED = 2 leaves
    // it out for any call, a staging kernel first copying the operands that need it into the
    // workspace and computing C's last N mod 4 columns (templates/sgemm_staging.cuh).
    // KMAJOR = 1 keeps an operand stored as rows of x in B's place as it is stored (NT's
    // weights), copied 16 bytes at a time; BK 32 is for it alone (the template says why).
    // SUM_PASS = 1 sums split-K's slices in a second kernel rather than in the last block of
    // each tile, 2 adds them into C with float atomics, whose order varies from run to run
    // (the tuner tries 2 only when allowed to), and 3 has them add into C in turn, in slice
    // order; templates/sgemm_splitk.cuh says where each pays.
    f.params = {{"BM", {32, 64, 128, 256}},
                {"BN", {64, 128, 256}},
                {"BK", {8, 16, 32}},
                {"WM", {32, 64}},
                {"WN", {32, 64}},
                {"TM", {8, 16}},
                {"TN", {4, 8, 16}},
                {"STAGES", {2, 3, 4}},
                {"TA", {0, 1}},
                {"TB", {0, 1}},
                {"WK", {1, 2}, /*split_count=*/false, /*stream_k=*/false, /*k_groups=*/true},
                {"SPLITS", {1, 2, 3, 4, 6, 8, 12, 16}, /*split_count=*/true},
                {"CT", {0, 1}},
                {"SK", {0, 1}, /*split_count=*/false, /*stream_k=*/true},
                {"ALIGNED", {0, 1, 2}, /*split_count=*/false, /*stream_k=*/false, /*k_groups=*/false, /*aligned_only=*/true},
                {"KMAJOR", {0, 1}},
                {"SUM_PASS", {SGEMM_SUM_BY_LAST_BLOCK, SGEMM_SUM_BY_PASS, SGEMM_SUM_BY_ATOMICS, SGEMM_SUM_IN_ORDER},
                 /*split_count=*/false, /*stream_k=*/false, /*k_groups=*/false, /*aligned_only=*/false,
                 /*sum_pass=*/true}};
    // 256x128 tiles make 528 blocks at 4095x4097x4093, exactly 4 waves on the H200's 132
    // SMs (128x256 makes 544: a fifth wave for 4 blocks), and 512 at 4096^3 like 128x256.
    // ALIGNED = 0 serves every alignment class.
    f.defaults = {256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, 1, 0, 0, 0, 0, 0};
    f.swappable_params = {{"TM", "TN"}};
    f.min_sm = 80;  // cp.async
    f.records_timeline = true;
    f.constraint_violation = [f](const ParamValues& v, const ArchLimits& lim) {
        return warptile_violation(warptile_shape(f, v), lim);
    };
    f.estimated_registers = [f](const ParamValues& v) { return warptile_shape(f, v).estimated_registers(); };
    f.geometry = [f](const ParamValues& v, int M, int N, int) {
        const WarptileShape s = warptile_shape(f, v);
        return LaunchGeometry{
            dim3(grid_blocks(tiles_along(s.tiled_rows(M, N), s.bm) * tiles_along(s.tiled_cols(M, N), s.bn)), s.splits),
            dim3(s.threads()), s.shared_bytes()};
    };
    f.workspace = [f](const ParamValues& v, int M, int N, int K, int sms, int alignment) -> std::size_t {
        const WarptileShape s = warptile_shape(f, v);
        // A call of class 16 has nothing to copy, nor does it use the tile counters (a staged
        // binary neither splits k nor has a tail), so a stream need not give it a workspace.
        if (s.aligned == 2) return alignment < 16 ? sgemm_staged_workspace_bytes(s.ta, s.tb, s.ct, s.kmajor, M, N, K) : 0;
        if (f.stream_k_split(v, M, N, K, sms).tail_blocks > 0)
            return sgemm_stream_k_workspace_bytes(s.bm, s.bn, sms);
        // Slices that add into C themselves (atomics, turns) need the tile counters alone.
        const bool into_c = s.sum_pass == SGEMM_SUM_BY_ATOMICS || s.sum_pass == SGEMM_SUM_IN_ORDER;
        return into_c ? sgemm_splitk_counters_workspace_bytes(s.splits) : sgemm_splitk_workspace_bytes(s.splits, M, N);
    };
    return f;
}

}  // namespace sgemm
