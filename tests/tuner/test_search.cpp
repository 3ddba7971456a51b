// Candidate pruning, the cost model's ranking on cases whose answer is known, and the
// search strategies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "src/families/registry.h"
#include "src/records/kernel_records.h"
#include "src/util/error.h"
#include "templates/sgemm_common.cuh"
#include "tuner/cost_model.h"
#include "tuner/search.h"

using namespace sgemm;

namespace {

ShapeKey nn(int M, int N, int K) {
    ShapeKey k;
    k.M = M, k.N = N, k.K = K;
    return k;
}

const DeviceModel& h200() {
    static const DeviceModel m = planning_model("H200", 132, Arch{90});
    return m;
}

bool has_family(const std::vector<Candidate>& cs, const std::string& name) {
    return std::any_of(cs.begin(), cs.end(), [&](const Candidate& c) { return c.family->name == name; });
}

double cost(const std::string& family, const ParamValues& values, const ShapeKey& shape) {
    return estimate_cost({&find_family(family), values}, shape, h200()).seconds;
}

std::set<ParamValues> values_of(const std::vector<Candidate>& cs) {
    std::set<ParamValues> out;
    for (const Candidate& c : cs) out.insert(c.values);
    return out;
}

bool contains(const std::vector<Candidate>& cs, const Candidate& c) {
    return std::find(cs.begin(), cs.end(), c) != cs.end();
}

// The model search's plan with `starts` walks of `rounds` batches each.
SearchPlan walks(int starts, int rounds) {
    SearchPlan plan;
    plan.refine_starts = starts;
    plan.refine_rounds = rounds;
    return plan;
}

// The warptile candidates of an NN 4096^3 GEMM on sm_90.
std::vector<Candidate> warptile_4096() {
    return enumerate_candidates(nn(4096, 4096, 4096), Arch{90}, {"warptile"});
}

// How many parameters a and b differ in.
int params_changed(const Candidate& a, const Candidate& b) {
    int changed = 0;
    for (std::size_t i = 0; i < a.values.size(); ++i) changed += a.values[i] != b.values[i];
    return changed;
}

// Whether b differs from a in two parameters and one of the two single moves from a toward b
// leaves `all` (one_step_neighbours' step across an edge of the space).
bool one_single_move_leaves(const Candidate& a, const Candidate& b, const std::vector<Candidate>& all) {
    std::vector<std::size_t> moved;
    for (std::size_t i = 0; i < a.values.size(); ++i)
        if (a.values[i] != b.values[i]) moved.push_back(i);
    if (moved.size() != 2) return false;
    for (std::size_t i : moved) {
        Candidate single = a;
        single.values[i] = b.values[i];
        if (!contains(all, single)) return true;
    }
    return false;
}

// Decode candidates that differ at most in SPLITS, the family's last parameter.
// The same values but perhaps the split count.
bool same_decode_tile(const Candidate& a, const Candidate& b) {
    const std::size_t splits = a.family->param_index("SPLITS"), sum = a.family->param_index("SUM_PASS");
    for (std::size_t i = 0; i < a.values.size(); ++i)
        if (i != splits && i != sum && a.values[i] != b.values[i]) return false;
    return true;
}

TEST(Candidates, DefaultFamiliesLeaveOutTheTeachingRungs) {
    const std::vector<Candidate> cs = enumerate_candidates(nn(8, 4096, 4096), Arch{90}, {});
    EXPECT_TRUE(has_family(cs, "decode"));
    EXPECT_TRUE(has_family(cs, "async"));
    EXPECT_FALSE(has_family(cs, "naive"));
    EXPECT_FALSE(has_family(cs, "blocktile"));
    for (const Candidate& c : cs) EXPECT_EQ(c.family->invalid_reason(c.values, Arch{90}), "");
}

// Sizes within 4096 of 2^31 wrap in the kernels' int tile counts: no kernel is a candidate
// (cuBLAS alone is timed), at the largest size that does not wrap every default family is.
TEST(Candidates, NoKernelIsACandidateForASizeItsTileCountsWrap) {
    for (const ShapeKey& past : {nn(1, 64, INT_MAX - 14), nn(kLargestKernelDimension + 1, 8, 8),
                                 nn(1, kLargestKernelDimension + 1, 8)})
        EXPECT_TRUE(enumerate_candidates(past, Arch{90}, {}).empty()) << past.to_string();
    const std::vector<Candidate> largest = enumerate_candidates(nn(1, 64, kLargestKernelDimension), Arch{90}, {"warptile"});
    EXPECT_FALSE(largest.empty());
}

TEST(Candidates, NamedFamiliesOnly) {
    const std::vector<Candidate> cs = enumerate_candidates(nn(8, 4096, 4096), Arch{90}, {"naive", "smem"});
    EXPECT_TRUE(has_family(cs, "naive"));
    EXPECT_FALSE(has_family(cs, "decode"));
    EXPECT_EQ(cs.size(), find_family("naive").valid_configs(Arch{90}).size() +
                             find_family("smem").valid_configs(Arch{90}).size());
}

TEST(Candidates, ShapesAFamilyCannotRunArePruned) {
    // Decode stages 32 rows x K of A in shared memory: at K = 65536 with one slice that is
    // 8 MB, so those configurations must be gone.
    const std::vector<Candidate> cs = enumerate_candidates(nn(32, 4096, 65536), Arch{90}, {"decode"});
    ASSERT_FALSE(cs.empty());
    for (const Candidate& c : cs)
        EXPECT_EQ(c.family->unsupported_shape_reason(c.values, 32, 4096, 65536, Arch{90}), "") << c.describe();
    EXPECT_LT(cs.size(), find_family("decode").valid_configs(Arch{90}).size());
}

TEST(Candidates, TransposedShapesOnlyGetFamiliesThatReadThem) {
    ShapeKey key = nn(64, 512, 512);
    key.trans_b = true;
    const std::vector<Candidate> cs = enumerate_candidates(key, Arch{90}, {});
    for (const Candidate& c : cs) EXPECT_TRUE(c.family->reads_transposes(c.values, false, true)) << c.describe();
    EXPECT_FALSE(has_family(cs, "async"));  // the ladder reads NN only
}

// Candidates with warptile's ALIGNED at `value`.
long with_aligned(const std::vector<Candidate>& cs, int value) {
    return std::count_if(cs.begin(), cs.end(),
                         [&](const Candidate& c) { return c.family->value(c.values, "ALIGNED") == value; });
}

// Binaries without the 4-byte fallback (warptile's ALIGNED = 1) are candidates only for
// calls whose operands are all 16-byte aligned; the others get every tile with the fallback.
TEST(Candidates, BinariesForAlignedOperandsOnlyServeAlignmentClass16) {
    ShapeKey key = nn(4095, 4097, 4093);
    key.alignment = 16;
    const std::vector<Candidate> aligned = enumerate_candidates(key, Arch{90}, {"warptile"});
    EXPECT_GT(with_aligned(aligned, 1), 0);
    EXPECT_EQ(with_aligned(aligned, 1), with_aligned(aligned, 0));
    for (int alignment : {8, 4}) {
        key.alignment = alignment;
        const std::vector<Candidate> cs = enumerate_candidates(key, Arch{90}, {"warptile"});
        EXPECT_EQ(with_aligned(cs, 1), 0) << alignment;
        EXPECT_EQ(with_aligned(cs, 0), with_aligned(aligned, 0)) << alignment;
        EXPECT_EQ(with_aligned(cs, 2), with_aligned(aligned, 2)) << alignment;
    }
}

// Staging (ALIGNED = 2) is a candidate where it may pay: operands not all 16-byte aligned, or
// an N that is no multiple of 4 (its last columns); not for aligned calls with such an N,
// nor below N = 4, where the main kernel would have no columns. The cost model rates a staged
// binary ahead of its twin with the fallback at 4095x4097x4093, where it needs a row of tiles
// less, and behind it at 4095x4096x4096 of class 4, where the copy gains no tiles.
TEST(Candidates, StagingOnlyWhereItMayPay) {
    const auto staged = [](const ShapeKey& key) {
        return with_aligned(enumerate_candidates(key, Arch{90}, {"warptile"}), 2);
    };
    ShapeKey key = nn(4095, 4097, 4093);
    key.alignment = 4;
    EXPECT_GT(staged(key), 0);
    key.alignment = 16;
    EXPECT_GT(staged(key), 0);  // N mod 4 = 1
    EXPECT_EQ(staged(nn(4096, 4096, 4096)), 0);
    key = nn(4096, 4096, 4096);
    key.alignment = 8;
    EXPECT_GT(staged(key), 0);
    key = nn(64, 3, 64);
    key.alignment = 4;
    EXPECT_EQ(staged(key), 0);

    // 256x128 tiles of C^T in 4 stages (the H200's best staged binary there, at 1.02x cuBLAS):
    // 17 rows of tiles over 4097 columns, 16 over 4096.
    const Family& f = find_family("warptile");
    ParamValues fallback = f.defaults;
    fallback[f.param_index("CT")] = 1;
    fallback[f.param_index("STAGES")] = 4;
    ParamValues staging = fallback;
    staging[f.param_index("ALIGNED")] = 2;
    key = nn(4095, 4097, 4093);
    key.alignment = 4;
    EXPECT_LT(cost("warptile", staging, key), cost("warptile", fallback, key));
    key = nn(4095, 4096, 4096);
    key.alignment = 4;
    EXPECT_GT(cost("warptile", staging, key), cost("warptile", fallback, key));
}

// Split-K that adds with float atomics gives C in a different last bit from run to run: the
// tuner tries it only when allowed (sgemm-tune --allow-atomics). Allowed, each tile summed by
// the pass has its atomic twin and each atomic tile its twin with the pass; not allowed, none
// is there, and nothing else is missing.
TEST(Candidates, AtomicSumsOnlyWhenAllowed) {
    const Family& f = find_family("warptile");
    const std::vector<Candidate> plain = enumerate_candidates(nn(32, 4096, 4096), Arch{90}, {"warptile"});
    const std::vector<Candidate> allowed =
        enumerate_candidates(nn(32, 4096, 4096), Arch{90}, {"warptile"}, /*atomics_allowed=*/true);
    long atomic = 0;
    for (const Candidate& c : allowed) {
        if (!f.sums_with_atomics(c.values)) {
            EXPECT_TRUE(contains(plain, c)) << c.describe();
            continue;
        }
        ++atomic;
        Candidate pass = c;
        pass.values[f.param_index("SUM_PASS")] = SGEMM_SUM_BY_PASS;
        EXPECT_TRUE(contains(plain, pass)) << c.describe();
    }
    EXPECT_GT(atomic, 0);
    EXPECT_EQ(plain.size() + atomic, allowed.size());
    // The turns on C repeat bit for bit: offered without atomics.
    EXPECT_TRUE(std::any_of(plain.begin(), plain.end(), [&](const Candidate& c) { return f.sums_in_order(c.values); }));
    for (const Candidate& c : plain) {
        if (!f.has_sum_pass(c.values)) continue;
        Candidate adding = c;
        adding.values[f.param_index("SUM_PASS")] = SGEMM_SUM_BY_ATOMICS;
        EXPECT_TRUE(contains(allowed, adding)) << c.describe();
    }
    for (const Candidate& c : plain) EXPECT_FALSE(f.sums_with_atomics(c.values)) << c.describe();
}

TEST(Candidates, SpillsAreReasonsNotToTime) {
    PtxasInfo clean;
    clean.found = true;
    EXPECT_EQ(spills_reason(clean), "");
    PtxasInfo spilling = clean;
    spilling.spill_store_bytes = 8;
    EXPECT_NE(spills_reason(spilling).find("8 B stored"), std::string::npos);
}

TEST(CostModel, SkinnyShapesPreferTheStreamingFamily) {
    const ShapeKey key = nn(1, 4096, 4096);
    EXPECT_LT(cost("decode", {1, 128, 8, 4, 1, 0, 4, 0, 0}, key), cost("async", {128, 256, 8, 8, 16}, key));
}

TEST(CostModel, TheLadderRanksInOrderOnALargeSquare) {
    const ShapeKey key = nn(4096, 4096, 4096);
    const double naive = cost("naive", {32, 8}, key);
    const double vec4 = cost("vec4", {128, 128, 8, 8, 8}, key);
    const double async = cost("async", {128, 256, 8, 8, 16}, key);
    EXPECT_LT(async, vec4);
    EXPECT_LT(vec4, naive);
}

TEST(CostModel, LargeThreadTilesWinOnALargeSquare) {
    // 4096^3 fills the H200 with 64x128 blocks of 8x4 thread tiles as with 256x128 blocks of
    // 16x8; the latter read fewer fragments per FFMA and ran 18% faster there.
    const ShapeKey key = nn(4096, 4096, 4096);
    EXPECT_LT(cost("warptile", {256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, 1, 0, 0, 0, 0, 0}, key),
              cost("warptile", {64, 128, 16, 32, 32, 8, 4, 3, 0, 0, 1, 1, 0, 0, 0, 0, 0}, key));
}

// A stream-K tail fills a part-empty last wave at a price: on the H200 it gained 1.2% at
// 8192^3 (15.5 waves of 256x128 tiles) and lost 1-2% at 4096^3 (3.88 waves). Where the
// tiles fill whole waves the two configurations launch the same kernel and cost the same.
TEST(CostModel, AStreamKTailPaysOnlyWhenTheLastWaveIsSmall) {
    const ParamValues whole = {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 0, 0, 0, 0}, tail = {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 1, 0, 0, 0};
    EXPECT_LT(cost("warptile", tail, nn(8192, 8192, 8192)), cost("warptile", whole, nn(8192, 8192, 8192)));
    EXPECT_GT(cost("warptile", tail, nn(4096, 4096, 4096)), cost("warptile", whole, nn(4096, 4096, 4096)));
    EXPECT_EQ(cost("warptile", tail, nn(4224, 4095, 4093)), cost("warptile", whole, nn(4224, 4095, 4093)));
    // Nor where the tail's count of k iterations would pass 2^31 (68 shared tiles here), and the
    // main kernel takes every tile (Family::stream_k_split).
    EXPECT_EQ(cost("warptile", tail, nn(8192, 8192, 32'000'000)), cost("warptile", whole, nn(8192, 8192, 32'000'000)));
}

// On a grid of less than one wave the tail's own costs show: its first parts rank every run
// before they start, and one block sums a tile's many parts. On an H100 the tail of one-warp
// 32x64 tiles took 41.7 us at 7x17x1000 TT, the same tile split in 16 12.2 us (rated 7.6 and
// 13.1 us before the tail's costs were counted).
TEST(CostModel, AStreamKTailOnLessThanAWaveRatesSlowerThanSplitK) {
    ShapeKey key = nn(7, 17, 1000);
    key.trans_a = key.trans_b = true;
    const ParamValues tail = {32, 64, 32, 32, 64, 8, 8, 2, 1, 1, 1, 1, 0, 1, 0, 1, 0};
    const ParamValues split_16 = {32, 64, 32, 32, 64, 8, 8, 2, 1, 1, 2, 16, 0, 0, 0, 1, 1};
    EXPECT_GT(cost("warptile", tail, key), 2.0 * cost("warptile", split_16, key));
}

// As TN (no transposing copies either way) 256x128 blocks of 16x8 ran 98.3% of cuBLAS on the
// H200 at 4096^3, 128x256 of 8x16 96.2%.
TEST(CostModel, TallThreadTilesBeatWideOnes) {
    ShapeKey key = nn(4096, 4096, 4096);
    key.trans_a = true;
    EXPECT_LT(cost("warptile", {256, 128, 16, 64, 64, 16, 8, 3, 1, 0, 1, 1, 0, 0, 0, 0, 0}, key),
              cost("warptile", {128, 256, 16, 64, 64, 8, 16, 3, 1, 0, 1, 1, 0, 0, 0, 0, 0}, key));
}

// Tiles of C^T cover M by BN: at batch 32, a 32-row tile of C^T wastes most of a 256-wide
// BN, where the same tile of C fits M exactly.
TEST(CostModel, TilesOfCTransposedAreMeasuredAgainstTheirOwnFit) {
    const ShapeKey skinny = nn(32, 4096, 4096);
    EXPECT_LT(cost("warptile", {32, 256, 16, 32, 64, 8, 8, 3, 0, 0, 1, 8, 0, 0, 0, 0, 0}, skinny),
              cost("warptile", {32, 256, 16, 32, 64, 8, 8, 3, 0, 0, 1, 8, 1, 0, 0, 0, 0}, skinny));
}

// NN's A is copied transposed; as tiles of C^T it sits on the 128 side of a 256x128 tile,
// not the 256 one, which ran 5% faster at 4096^3 on the H200 (TN, with no transposed
// copies, faster still).
TEST(CostModel, TransposedCopiesOnTheNarrowSideCostLess) {
    const ShapeKey nn_key = nn(4096, 4096, 4096);
    ShapeKey tn_key = nn_key;
    tn_key.trans_a = true;
    const double as_c = cost("warptile", {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 0, 0, 0, 0, 0}, nn_key);
    const double as_c_transposed = cost("warptile", {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 0, 0, 0, 0}, nn_key);
    const double no_transposed_copies = cost("warptile", {256, 128, 16, 64, 64, 16, 8, 4, 1, 0, 1, 1, 0, 0, 0, 0, 0}, tn_key);
    EXPECT_LT(as_c_transposed, as_c);
    EXPECT_LT(no_transposed_copies, as_c_transposed);
}

// NT's weights in B's place: with KMAJOR and BK 32 they are copied 16 bytes at a time, 128
// bytes a row per tile, and at batch 32 (streaming) that rates faster than the same tile's
// 4-byte transposing copies of 64 bytes a row. NN's B, rows of k, takes no such term.
TEST(CostModel, RowsOfXInBsPlaceStreamFasterKeptAsStored) {
    ShapeKey nt_key = nn(32, 28672, 4096);
    nt_key.trans_b = true;
    const double transposed = cost("warptile", {32, 128, 16, 32, 64, 8, 8, 3, 0, 1, 2, 8, 0, 0, 0, 0, 0}, nt_key);
    const double kept = cost("warptile", {32, 128, 32, 32, 64, 8, 8, 3, 0, 1, 2, 8, 0, 0, 0, 1, 0}, nt_key);
    EXPECT_LT(kept, 0.95 * transposed);
    const ShapeKey nn_key = nn(32, 28672, 4096);
    const double nn_cost = cost("warptile", {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 0, 0, 0}, nn_key);
    EXPECT_LT(nn_cost, transposed);
}

// Only where B streams (NT, one row of tiles over M, K longer than a tile) do the longer
// pieces pay: NN's tiles of C^T with KMAJOR rate no faster than their BK 16 twins at 1024^3,
// nor NT's at 4096^3.
TEST(CostModel, KeptRowsOfXGainOnlyWhereBStreams) {
    // ALIGNED 0: a KMAJOR binary for aligned operands only rates 1% faster for its own reason.
    const ParamValues kmajor_ct = {128, 128, 32, 32, 64, 8, 8, 2, 0, 0, 1, 2, 1, 0, 0, 1, 0};
    ParamValues twin = kmajor_ct;
    twin[2] = 16, twin[15] = 0;
    EXPECT_GE(cost("warptile", kmajor_ct, nn(1024, 1024, 1024)), cost("warptile", twin, nn(1024, 1024, 1024)));
    ShapeKey nt_square = nn(4096, 4096, 4096);
    nt_square.trans_b = true;
    const ParamValues kmajor_nt = {128, 128, 32, 32, 64, 8, 8, 3, 0, 1, 1, 1, 0, 0, 0, 1, 0};
    ParamValues nt_twin = kmajor_nt;
    nt_twin[2] = 16, nt_twin[15] = 0;
    EXPECT_GE(cost("warptile", kmajor_nt, nt_square), cost("warptile", nt_twin, nt_square));
}

// A binary for aligned operands only rates a little faster where it drops the fallback of
// copies of rows of k (NN's B, TN's A and B); with NT, which copies no operand as rows of k,
// the twins rate alike, unless KMAJOR copies its B as stored.
TEST(CostModel, AlignedOnlyBinariesRateFasterWhereTheyDropCopies) {
    const ShapeKey nn_key = nn(4096, 4096, 4096);
    ShapeKey nt_key = nn_key;
    nt_key.trans_b = true;
    const ParamValues nn_fallback = {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 0, 0, 0, 0};
    const std::size_t aligned = find_family("warptile").param_index("ALIGNED");
    ParamValues nn_aligned = nn_fallback;
    nn_aligned[aligned] = 1;
    EXPECT_LT(cost("warptile", nn_aligned, nn_key), cost("warptile", nn_fallback, nn_key));
    const ParamValues nt_fallback = {256, 128, 16, 64, 64, 16, 8, 4, 0, 1, 1, 1, 0, 0, 0, 0, 0};
    ParamValues nt_aligned = nt_fallback;
    nt_aligned[aligned] = 1;
    EXPECT_EQ(cost("warptile", nt_aligned, nt_key), cost("warptile", nt_fallback, nt_key));
    // Unless B's place keeps NT's weights as stored (KMAJOR): 16-byte copies again.
    const ParamValues k_major_fallback = {128, 64, 32, 64, 32, 8, 8, 3, 0, 1, 1, 1, 0, 0, 0, 1, 0};
    ParamValues k_major_aligned = k_major_fallback;
    k_major_aligned[aligned] = 1;
    EXPECT_LT(cost("warptile", k_major_aligned, nt_key), cost("warptile", k_major_fallback, nt_key));
}

TEST(CostModel, GroupsOfWarpsAlongKOnlyWhereWarpsAreFew) {
    // On the H200 two groups of warps per 32x128 block of 2 warps made 32x4096x4096 12%
    // faster (about 4 warps per SM without them), and per 64x128 block of 4 warps made
    // 1024^3 22% slower (about 12 warps per SM without them).
    const ShapeKey skinny = nn(32, 4096, 4096), square = nn(1024, 1024, 1024);
    EXPECT_LT(cost("warptile", {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 0, 0, 0}, skinny),
              cost("warptile", {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 8, 0, 0, 0, 0, 0}, skinny));
    EXPECT_LT(cost("warptile", {64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 3, 0, 0, 0, 0, 0}, square),
              cost("warptile", {64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 3, 0, 0, 0, 0, 0}, square));
}

TEST(CostModel, SmallGridsPreferTilesThatFillTheSms) {
    // 1024^3: 128x256 tiles make 32 blocks for 132 SMs; 64x64 tiles make 256.
    const ShapeKey key = nn(1024, 1024, 1024);
    EXPECT_LT(cost("async", {64, 64, 16, 4, 4}, key), cost("async", {128, 256, 8, 8, 16}, key));
}

TEST(CostModel, EachTilesSplitKSumIsReadBackByOneBlock) {
    // 1024^3 on the H200: 256x128 tiles of 16x8 took 0.0659 ms with 4 slices and 0.0793 with
    // 8, though 8 slices fill the SMs twice over: the last block of each tile reads all its
    // slices' partials back (128 KB each) before the launch can end.
    const ShapeKey key = nn(1024, 1024, 1024);
    EXPECT_LT(cost("warptile", {256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, 4, 0, 0, 0, 0, 0}, key),
              cost("warptile", {256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, 8, 0, 0, 0, 0, 0}, key));
}

// The in-kernel finish costs what one tile's slices take to read back into one block, the
// sum pass what all of C's slices take across the GPU. So the pass rates faster for wide
// tiles of a small C (32x4096 in 32x256 tiles of 8 slices: 256 KB a finishing block against
// 4 MB in all) and slower for narrow ones of a larger C (1024^3 in 64x128 tiles of 3 slices:
// 96 KB a block, 12 MB in all). The rule is the model's; on the H200 the pass won the second
// case too (0.0551 ms against 0.0586), which the tuner finds because its final sweep times
// both sums of its fastest tiles (Search.TheSweepCrossesSplitCountsWithGroupsOfWarpsAlongK).
TEST(CostModel, TheSumPassCostsByAllOfCTheInKernelFinishByOneTile) {
    const auto finish = [](const ParamValues& v, const ShapeKey& key) {
        return estimate_cost({&find_family("warptile"), v}, key, h200()).finish_seconds;
    };
    const ShapeKey batch32 = nn(32, 4096, 4096), square = nn(1024, 1024, 1024);
    EXPECT_LT(finish({32, 256, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 1, 0, 1}, batch32),
              finish({32, 256, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 1, 0, 0}, batch32));
    EXPECT_GT(finish({64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 3, 0, 0, 1, 0, 1}, square),
              finish({64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 3, 0, 0, 1, 0, 0}, square));
}

// Adds into C by atomics cost less than the pass over the same partials and no kernel
// boundary: at batch 32 in 16 slices, where they ran 2-4 us under the pass on the H200.
TEST(CostModel, TheAtomicAddsCostLessThanThePass) {
    const auto finish = [](const ParamValues& v, const ShapeKey& key) {
        return estimate_cost({&find_family("warptile"), v}, key, h200()).finish_seconds;
    };
    const ShapeKey batch32 = nn(32, 4096, 4096);
    const double pass = finish({32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 16, 0, 0, 1, 0, 1}, batch32);
    const double atomics = finish({32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 16, 0, 0, 1, 0, 2}, batch32);
    EXPECT_GT(atomics, 0.0);
    EXPECT_LT(atomics, pass);
    EXPECT_GT(pass - atomics, 1.5e-6);
}

// Turns on C queue where a tile's slices run side by side (one round of resident blocks,
// batch 32 at 4096 columns: 15 turns of about 3 us), rated above the pass there; where the
// grid comes in rounds (128256 columns), the turns hide and what is left is moving C
// through L2, as the atomics do for one slice more: rated under both, as measured.
TEST(CostModel, TurnsOnCQueueInOneRoundAndHideInMany) {
    const auto cost = [](ParamValues v, int how, int splits, const ShapeKey& key) {
        v[11] = splits;
        v[16] = how;
        return estimate_cost({&find_family("warptile"), v}, key, h200());
    };
    const ParamValues tile = {32, 256, 16, 32, 64, 8, 8, 2, 0, 0, 1, 1, 0, 0, 1, 0, 0};
    const ShapeKey one_round = nn(32, 4096, 4096), rounds = nn(32, 128256, 4096);
    EXPECT_GT(cost(tile, SGEMM_SUM_IN_ORDER, 16, one_round).finish_seconds, 40e-6);
    EXPECT_GT(cost(tile, SGEMM_SUM_IN_ORDER, 16, one_round).seconds, cost(tile, SGEMM_SUM_BY_PASS, 16, one_round).seconds);
    const double turns = cost(tile, SGEMM_SUM_IN_ORDER, 6, rounds).finish_seconds;
    EXPECT_LT(turns, cost(tile, SGEMM_SUM_BY_ATOMICS, 6, rounds).finish_seconds);
    EXPECT_LT(turns, cost(tile, SGEMM_SUM_BY_PASS, 6, rounds).finish_seconds);
}

TEST(CostModel, TheSplitKSumReadsOnlyWhatLiesInsideC) {
    // At batch 1 an 8-row decode tile holds one row of C: its finish reads no more than a
    // 1-row tile's (the sum skips the rows outside C).
    const ShapeKey key = nn(1, 4096, 4096);
    const Family& f = find_family("decode");
    const double eight_rows = estimate_cost({&f, {8, 256, 8, 1, 1, 0, 8, 0, 0}}, key, h200()).finish_seconds;
    const double one_row = estimate_cost({&f, {1, 256, 8, 1, 1, 0, 8, 0, 0}}, key, h200()).finish_seconds;
    EXPECT_GT(one_row, 0.0);
    EXPECT_DOUBLE_EQ(eight_rows, one_row);
}

TEST(CostModel, OccupancyBeforePtxasComesFromTheFamilysRegisterEstimate) {
    // 256 threads of 16x8 thread tiles take 222-250 registers (ptxas, sm_90): one block per
    // SM. Counted as 128 registers before compiling, they were two per SM.
    const ShapeKey key = nn(1024, 1024, 1024);
    const Candidate c{&find_family("warptile"), {256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, 8, 0, 0, 0, 0, 0}};
    PtxasInfo compiled;
    compiled.found = true;
    compiled.registers = 242;
    EXPECT_EQ(estimate_cost(c, key, h200(), &compiled).blocks_per_sm, 1);
    EXPECT_EQ(estimate_cost(c, key, h200()).blocks_per_sm, 1);
    // Once compiled, ptxas's count is the one that counts.
    compiled.registers = 64;
    EXPECT_GT(estimate_cost(c, key, h200(), &compiled).blocks_per_sm, 1);
}

TEST(CostModel, SmallGridsTimeThreadTilesOf8x8) {
    // At 1024^3 on the H200 every 16x8 and 8x16 configuration the tuner timed (0.0637 ms and
    // slower) lost to 8x8 tiles with 8 to 12 warps per SM (0.0577-0.0608): with 32 to 128
    // blocks, big thread tiles leave too few warps. When the model counted 16x8 tiles as
    // needing half the warps of 8x8 ones, its top 8 held no 8x8 tile.
    const ShapeKey key = nn(1024, 1024, 1024);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"warptile"});
    const std::vector<Candidate> chosen = choose_candidates(all, key, h200(), SearchPlan{}, {});
    const Family& f = find_family("warptile");
    EXPECT_TRUE(std::any_of(chosen.begin(), chosen.end(), [&](const Candidate& c) {
        return f.value(c.values, "TM") == 8 && f.value(c.values, "TN") == 8;
    }));
}

TEST(CostModel, RowTilesThatFitTheBatchWin) {
    // Batch 8: an 8-row tile wastes nothing; a 32-row tile computes 4x the rows.
    const ShapeKey key = nn(8, 4096, 4096);
    EXPECT_LT(cost("decode", {8, 128, 8, 4, 1, 0, 4, 0, 0}, key), cost("decode", {32, 128, 8, 1, 1, 0, 4, 0, 0}, key));
}

TEST(CostModel, BothBatchesOfTheDecodeStreamAreInFlight) {
    // The decode kernel loads its next batch of B before it computes on the current one, so
    // a thread keeps 2 x UNROLL quads in flight. Counted as one batch, a block of 128
    // threads with UNROLL 1 looked starved and the model timed only UNROLL 2 tiles at
    // 8x28672x4096, 10% slower than the best there (exhaustive run on the H200).
    const ShapeKey key = nn(8, 28672, 4096);
    EXPECT_LE(cost("decode", {8, 256, 2, 1, 1, 0, 4, 0, 0}, key), cost("decode", {8, 256, 2, 2, 1, 0, 4, 0, 0}, key));
}

TEST(CostModel, ARingKeepsAllButOneOfItsBatchesInFlight) {
    // A ring of 6 batches keeps 5 in flight where registers keep 2: with few small blocks per
    // SM only the ring streams at full speed.
    ShapeKey key = nn(8, 4096, 4096);
    key.trans_b = true;
    EXPECT_LT(cost("decode", {8, 64, 4, 1, 1, 1, 4, 6, 0}, key), 0.8 * cost("decode", {8, 64, 4, 1, 1, 1, 4, 0, 0}, key));
}

TEST(CostModel, AStreamNeedsBytesInFlightNotEverySm) {
    // 64 blocks of 512 threads and 128 of 256 keep the same bytes in flight at
    // 1x4096x4096: half the SMs stream as fast as all of them. A quarter of the SMs (32
    // blocks of 512 threads) stream at half the rate or less.
    const ShapeKey key = nn(1, 4096, 4096);
    auto memory = [&](const ParamValues& v) { return estimate_cost({&find_family("decode"), v}, key, h200()).memory_seconds; };
    const double half = memory({1, 64, 32, 2, 1, 0, 1, 0, 0}), all = memory({1, 32, 32, 2, 1, 0, 1, 0, 0});
    EXPECT_NEAR(half, all, 1e-2 * all);  // apart only by the re-reads of A the tiles differ in
    EXPECT_GT(memory({1, 128, 16, 2, 1, 0, 1, 0, 0}), 1.9 * all);
    // A block past the SMs, resident beside another, adds its bytes and no round: 133
    // strips of 32 columns against 132, where the compute waves count two rounds.
    const ParamValues strip = {1, 32, 32, 2, 1, 0, 1, 0, 0};
    const CostEstimate fits = estimate_cost({&find_family("decode"), strip}, nn(1, 132 * 32, 4096), h200());
    const CostEstimate past = estimate_cost({&find_family("decode"), strip}, nn(1, 133 * 32, 4096), h200());
    EXPECT_NEAR(past.memory_seconds / fits.memory_seconds, 133.0 / 132.0, 1e-3);
    EXPECT_LT(past.wave_efficiency, 0.51);
}

TEST(CostModel, DecodeIsNotRatedSlowerThanItRan) {
    // On the H200, 8 rows owning 64-column strips through a ring ran 8x6144x4096 in 0.0327
    // ms, the launch included. A model that rates it slower ranks it out of the search.
    const ShapeKey key = nn(8, 6144, 4096);
    EXPECT_LT(cost("decode", {8, 64, 32, 1, 1, 0, 1, 3, 0}, key), 0.0327e-3);
}

TEST(CostModel, DecodeReadingNxKWantsEightLanesAlongK) {
    // B stored N x K: 4 groups along k read half lines, 8 whole ones. Stored K x N, every
    // warp reads whole rows of B either way, so only the N x K tile of 4 groups costs more.
    const ShapeKey key = nn(8, 28672, 4096);
    ShapeKey nt = key;
    nt.trans_b = true;
    EXPECT_DOUBLE_EQ(cost("decode", {8, 128, 8, 1, 0, 1, 1, 0, 0}, nt), cost("decode", {8, 128, 8, 1, 0, 0, 1, 0, 0}, key));
    EXPECT_GT(cost("decode", {8, 256, 4, 1, 0, 1, 1, 0, 0}, nt), 1.05 * cost("decode", {8, 256, 4, 1, 0, 0, 1, 0, 0}, key));
}

TEST(Search, StrategiesChooseAsDocumented) {
    const ShapeKey key = nn(8, 4096, 4096);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"decode"});
    SearchPlan plan;

    plan.strategy = Strategy::Exhaustive;
    EXPECT_EQ(choose_candidates(all, key, h200(), plan, {}).size(), all.size());
    plan.max_candidates = 5;
    EXPECT_EQ(choose_candidates(all, key, h200(), plan, {}).size(), 5u);
    plan.max_candidates = 0;

    plan.strategy = Strategy::Random;
    plan.random_budget = 7;
    const auto first = choose_candidates(all, key, h200(), plan, {});
    EXPECT_EQ(first.size(), 7u);
    EXPECT_EQ(first, choose_candidates(all, key, h200(), plan, {}));  // seeded: repeatable
    plan.seed = 2;
    EXPECT_NE(first, choose_candidates(all, key, h200(), plan, {}));

    plan.strategy = Strategy::Model;
    plan.top_k = 3;
    const std::vector<Candidate> ranked = rank_by_cost(all, key, h200());
    const Candidate neighbour = ranked.back();  // the worst by the model: only a neighbour brings it in
    const Candidate foreign{&find_family("async"), find_family("async").defaults};  // not in `all`
    const auto chosen = choose_candidates(all, key, h200(), plan, {neighbour, foreign});
    ASSERT_EQ(chosen.size(), 4u);
    EXPECT_EQ(chosen.front(), ranked.front());
    // The three are the cheapest estimates, one candidate for each.
    const auto seconds = [&](const Candidate& c) { return estimate_cost(c, key, h200()).seconds; };
    std::set<double> chosen_costs;
    for (int i = 0; i < 3; ++i) chosen_costs.insert(seconds(chosen[i]));
    EXPECT_EQ(chosen_costs.size(), 3u);
    for (const Candidate& c : ranked) {
        if (seconds(c) < *chosen_costs.rbegin()) {
            EXPECT_EQ(chosen_costs.count(seconds(c)), 1u) << c.describe();
        }
    }
    EXPECT_EQ(chosen.back(), neighbour);
    EXPECT_EQ(parse_strategy("random"), Strategy::Random);
    EXPECT_EQ(parse_strategy("Model"), Strategy::Model) << "read as --families reads its names";
    EXPECT_THROW(parse_strategy("greedy"), Error);
}

// Batch 32, o: the cost model gives the same estimate to warptile tiles that differ only in
// BK and STAGES, and the plain ranking's first eight hold such ties. The model strategy
// times one of each and spends the rest on the next estimates.
TEST(Search, ModelTimesOneCandidateOfEachTie) {
    const ShapeKey key = nn(32, 4096, 4096);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"warptile"});
    const auto seconds = [&](const Candidate& c) { return estimate_cost(c, key, h200()).seconds; };
    const std::vector<Candidate> ranked = rank_by_cost(all, key, h200());
    ASSERT_GE(ranked.size(), 8u);
    std::set<double> first_eight;
    for (int i = 0; i < 8; ++i) first_eight.insert(seconds(ranked[i]));
    EXPECT_LT(first_eight.size(), 8u);
    SearchPlan plan;
    const std::vector<Candidate> chosen = choose_candidates(all, key, h200(), plan, {});
    ASSERT_EQ(chosen.size(), 8u);
    std::set<double> costs;
    for (const Candidate& c : chosen) costs.insert(seconds(c));
    EXPECT_EQ(costs.size(), 8u);
}

// A tile of C and a tile of C^T are never one tie: on a large NN square the model rates
// 128x256 tiles of C and 256x128 tiles of C^T alike, and both are timed.
TEST(Search, ModelTimesEachTileItRatesAlike) {
    const ShapeKey key = nn(4096, 4096, 4096);
    const Family& f = find_family("warptile");
    const Candidate of_c{&f, {128, 256, 8, 64, 64, 16, 8, 3, 0, 0, 1, 1, 0, 0, 1, 0, 0}};
    const Candidate of_c_transposed{&f, {256, 128, 8, 64, 64, 16, 8, 3, 0, 0, 1, 1, 1, 0, 1, 0, 0}};
    ASSERT_EQ(estimate_cost(of_c, key, h200()).seconds, estimate_cost(of_c_transposed, key, h200()).seconds);
    const std::vector<Candidate> chosen = choose_candidates(warptile_4096(), key, h200(), SearchPlan{}, {});
    EXPECT_TRUE(contains(chosen, of_c));
    EXPECT_TRUE(contains(chosen, of_c_transposed));
    // Their variants in BK and STAGES, which the model cannot see, still wait for refinement:
    // each tile is timed once, at the first BK and STAGES of the lists it allows, and without
    // the 4-byte fallback, which the model rates a little faster where the call allows it.
    for (const Candidate& c : chosen) {
        EXPECT_EQ(f.value(c.values, "BK"), 8) << c.describe();
        EXPECT_EQ(f.value(c.values, "STAGES"), 3) << c.describe();
        EXPECT_EQ(f.value(c.values, "ALIGNED"), 1) << c.describe();
    }
}

TEST(Search, OneStepNeighboursMoveOneParameterByOnePlace) {
    const ShapeKey key = nn(8, 4096, 4096);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"decode"});
    const Candidate from{&find_family("decode"), {8, 128, 8, 2, 1, 0, 4, 0, 0}};
    const std::vector<Candidate> near = one_step_neighbours(from, all);
    ASSERT_FALSE(near.empty());
    for (const Candidate& c : near)
        EXPECT_TRUE(params_changed(c, from) == 1 || one_single_move_leaves(from, c, all)) << c.describe();
    // MT 8 -> 4 and 16 are one place away in {1,2,4,8,16,32}; 2 is two.
    EXPECT_NE(std::find(near.begin(), near.end(), Candidate{from.family, {4, 128, 8, 2, 1, 0, 4, 0, 0}}), near.end());
    EXPECT_NE(std::find(near.begin(), near.end(), Candidate{from.family, {16, 128, 8, 2, 1, 0, 4, 0, 0}}), near.end());
    EXPECT_EQ(std::find(near.begin(), near.end(), Candidate{from.family, {2, 128, 8, 2, 1, 0, 4, 0, 0}}), near.end());
    // The load policy is one move away.
    EXPECT_NE(std::find(near.begin(), near.end(), Candidate{from.family, {8, 128, 8, 2, 0, 0, 4, 0, 0}}), near.end());
    // So is every other split count, however far along its list.
    for (int splits : {1, 2, 3, 6, 8, 12, 16, 24, 32})
        EXPECT_NE(std::find(near.begin(), near.end(), Candidate{from.family, {8, 128, 8, 2, 1, 0, splits, 0, 0}}), near.end())
            << splits;
}

// Where one of two single moves leaves the space, both at once are one step: the H200's NT
// tune of 8x28672x4096 stopped at decode BN=64 KW=16 RING=6, since BN=128 with RING=6 has
// no room for A beside the ring and RING=3 alone was slower; BN=128 with RING=3 was 8% faster.
// Two moves whose single moves both stay in the space are not a step, nor is any with a split
// count (the split sweep times those).
TEST(Search, AStepCrossesAnEdgeOfTheSpaceByTwoMoves) {
    ShapeKey key = nn(8, 28672, 4096);
    key.trans_b = true;
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"decode"});
    const Family& f = find_family("decode");
    const Candidate stopped{&f, {8, 64, 16, 1, 0, 1, 1, 6, 0}}, across{&f, {8, 128, 16, 1, 0, 1, 1, 3, 0}};
    const Candidate over_the_edge{&f, {8, 128, 16, 1, 0, 1, 1, 6, 0}}, ring_alone{&f, {8, 64, 16, 1, 0, 1, 1, 3, 0}};
    ASSERT_TRUE(contains(all, stopped));
    ASSERT_TRUE(contains(all, across));
    ASSERT_TRUE(contains(all, ring_alone));
    ASSERT_FALSE(contains(all, over_the_edge));
    const std::vector<Candidate> near = one_step_neighbours(stopped, all);
    EXPECT_TRUE(contains(near, across));
    EXPECT_TRUE(contains(near, ring_alone));

    // EF and RING together: each alone stays in the space.
    const Candidate both_inside{&f, {8, 64, 16, 1, 1, 1, 1, 3, 0}};
    ASSERT_TRUE(contains(all, both_inside));
    ASSERT_TRUE(contains(all, Candidate{&f, {8, 64, 16, 1, 1, 1, 1, 6, 0}}));
    EXPECT_FALSE(contains(near, both_inside));
    // BN with a split count: BN=128 at RING=6 fits beside A in 4 slices, not in one.
    const Candidate with_splits{&f, {8, 128, 16, 1, 0, 1, 4, 6, 0}};
    ASSERT_TRUE(contains(all, with_splits));
    EXPECT_FALSE(contains(near, with_splits));
    // Three moves are never a step.
    for (const Candidate& c : near) EXPECT_LE(params_changed(c, stopped), 2) << c.describe();
}

// A thread tile turned on its side (warptile's TM and TN traded) is one move away: moving one
// of them at a time passes through 8x8 or 16x16 tiles, which may be slower than both.
TEST(Search, AThreadTileTurnsOnItsSideInOneMove) {
    const std::vector<Candidate> all = warptile_4096();
    const Family& f = find_family("warptile");
    const Candidate wide{&f, {256, 128, 16, 64, 64, 8, 16, 4, 0, 0, 1, 1, 1, 0, 0, 0, 0}};
    const Candidate tall{&f, {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 0, 0, 0, 0}};
    ASSERT_TRUE(contains(all, wide));
    ASSERT_TRUE(contains(all, tall));
    const std::vector<Candidate> from_wide = one_step_neighbours(wide, all);
    EXPECT_TRUE(contains(from_wide, tall));
    EXPECT_TRUE(contains(one_step_neighbours(tall, all), wide));
    // Only the pair trades: every other neighbour differs in one parameter, or steps across
    // an edge of the space.
    ASSERT_GT(from_wide.size(), 1u) << "the wide tile has neighbours besides the tall one";
    for (const Candidate& c : from_wide) {
        if (c == tall) continue;
        EXPECT_TRUE(params_changed(c, wide) == 1 || one_single_move_leaves(wide, c, all)) << c.describe();
    }
    // A square thread tile has nothing to trade.
    const Candidate square{&f, {128, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 1, 0, 0, 0, 0, 0}};
    ASSERT_TRUE(contains(all, square));
    const std::vector<Candidate> from_square = one_step_neighbours(square, all);
    ASSERT_FALSE(from_square.empty());
    for (const Candidate& c : from_square)
        EXPECT_TRUE(params_changed(c, square) == 1 || one_single_move_leaves(square, c, all)) << c.describe();
}

// A walk out of rounds stops where it is; a tile it met on the way, faster, then gets every
// other split count timed, and after that refinement is done.
// With one round a walk stops after one move; a faster neighbour it met is then among the
// fastest with neighbours never timed, so the next walk starts there. Every split count is
// one step away, so that walk times each split count of the tile (split times are not
// monotonic: on the H200 a 1024^3 tile's best, 3 slices, was met only as a neighbour in
// some runs). The sweep that follows holds the tile's split counts with the other sum (the
// sum pass, a neighbour only at the walk's own split count), and then the refinement ends.
TEST(Search, AWalkStartsFromAFasterNeighbourAWalkMet) {
    const ShapeKey key = nn(8, 4096, 4096);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"decode"});
    const Family& f = find_family("decode");
    const Candidate start{&f, {8, 128, 8, 2, 1, 0, 4, 0, 0}}, met{&f, {8, 128, 8, 2, 0, 0, 4, 0, 0}};
    Refinement refinement(all, key, h200(), walks(1, 1));
    std::vector<TimedCandidate> timed = {{start, 1.0}};
    std::vector<Candidate> tried = {start};
    const std::vector<Candidate> walk = refinement.next(timed, tried);
    ASSERT_NE(std::find(walk.begin(), walk.end(), met), walk.end());
    for (const Candidate& c : walk) {
        tried.push_back(c);
        timed.push_back({c, c == met ? 0.9 : 2.0});
    }
    std::vector<Candidate> expected;
    for (const Candidate& c : one_step_neighbours(met, all))
        if (std::find(tried.begin(), tried.end(), c) == tried.end()) expected.push_back(c);
    std::size_t split_counts = 0;
    for (const Candidate& c : expected) split_counts += same_decode_tile(c, met);
    ASSERT_GE(split_counts, 5u);
    const std::vector<Candidate> from_met = refinement.next(timed, tried);
    EXPECT_EQ(values_of(from_met), values_of(expected));
    tried.insert(tried.end(), from_met.begin(), from_met.end());
    for (const Candidate& c : from_met) timed.push_back({c, 3.0});
    std::vector<Candidate> rest;
    for (const Candidate& c : all)
        if (same_decode_tile(c, met) && std::find(tried.begin(), tried.end(), c) == tried.end()) rest.push_back(c);
    ASSERT_FALSE(rest.empty());
    const std::vector<Candidate> sweep = refinement.next(timed, tried);
    EXPECT_EQ(values_of(sweep), values_of(rest));
    tried.insert(tried.end(), sweep.begin(), sweep.end());
    for (const Candidate& c : sweep) timed.push_back({c, 3.0});
    EXPECT_TRUE(refinement.next(timed, tried).empty());
}

// The walks from the fastest step together: one batch holds the untried neighbours of every
// walk's point, so the tuner compiles them in parallel instead of one walk's few at a time.
TEST(Search, TheWalksFromTheFastestStepTogether) {
    const ShapeKey key = nn(8, 4096, 4096);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"decode"});
    const Family& f = find_family("decode");
    const Candidate first{&f, {8, 128, 8, 2, 1, 0, 4, 0, 0}}, second{&f, {2, 64, 4, 2, 0, 0, 3, 0, 0}}, third{&f, {4, 256, 2, 1, 0, 0, 1, 0, 0}};
    for (const Candidate& c : {first, second, third}) ASSERT_TRUE(contains(all, c)) << c.describe();
    Refinement refinement(all, key, h200(), walks(2, 3));
    std::vector<TimedCandidate> timed = {{first, 1.0}, {second, 1.1}, {third, 1.2}};
    std::vector<Candidate> tried = {first, second, third};
    auto untried_neighbours = [&](const Candidate& c) {
        std::vector<Candidate> out;
        for (const Candidate& n : one_step_neighbours(c, all))
            if (!contains(tried, n)) out.push_back(n);
        return out;
    };
    std::set<ParamValues> expected = values_of(untried_neighbours(first));
    const std::set<ParamValues> of_second = values_of(untried_neighbours(second));
    ASSERT_FALSE(std::includes(expected.begin(), expected.end(), of_second.begin(), of_second.end()));
    expected.insert(of_second.begin(), of_second.end());
    const std::vector<Candidate> batch = refinement.next(timed, tried);
    EXPECT_EQ(values_of(batch), expected);
    EXPECT_EQ(values_of(batch).size(), batch.size()) << "a neighbour of both walks is handed out once";

    // Each walk moves to its own fastest neighbour, and the next batch is both their neighbours.
    const Candidate next_of_first = untried_neighbours(first).front(), next_of_second = untried_neighbours(second).back();
    ASSERT_FALSE(next_of_first == next_of_second);
    for (const Candidate& c : batch) {
        tried.push_back(c);
        timed.push_back({c, c == next_of_first ? 0.9 : c == next_of_second ? 1.05 : 2.0});
    }
    std::set<ParamValues> expected_next = values_of(untried_neighbours(next_of_first));
    const std::set<ParamValues> of_next_second = values_of(untried_neighbours(next_of_second));
    expected_next.insert(of_next_second.begin(), of_next_second.end());
    ASSERT_FALSE(expected_next.empty());
    EXPECT_EQ(values_of(refinement.next(timed, tried)), expected_next);
}

// Two walks whose fastest neighbour is the same point: the first moves there, the second
// takes its next faster neighbour, as it did when walks went one at a time (the first's
// neighbours were tried by then). Here the starts are one decode tile with 1 and 2 slices,
// which share every split count as a neighbour.
TEST(Search, AWalkWhoseBestNeighbourAnotherWalkTookGoesItsNextWay) {
    const ShapeKey key = nn(8, 4096, 4096);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"decode"});
    const Family& f = find_family("decode");
    const Candidate first{&f, {1, 32, 16, 1, 1, 0, 1, 0, 0}}, second{&f, {1, 32, 16, 1, 1, 0, 2, 0, 0}};
    const Candidate shared{&f, {1, 32, 16, 1, 1, 0, 3, 0, 0}}, second_way{&f, {1, 32, 16, 1, 0, 0, 2, 0, 0}};
    for (const Candidate& c : {first, second, shared, second_way}) ASSERT_TRUE(contains(all, c)) << c.describe();
    Refinement refinement(all, key, h200(), walks(2, 3));
    std::vector<TimedCandidate> timed = {{first, 1.0}, {second, 1.1}};
    std::vector<Candidate> tried = {first, second};
    const std::vector<Candidate> batch = refinement.next(timed, tried);
    ASSERT_TRUE(contains(batch, shared));
    ASSERT_TRUE(contains(batch, second_way));
    ASSERT_FALSE(contains(one_step_neighbours(first, all), second_way));
    for (const Candidate& c : batch) {
        tried.push_back(c);
        timed.push_back({c, c == shared ? 0.5 : c == second_way ? 0.8 : 2.0});
    }
    std::set<ParamValues> expected;
    for (const Candidate& walked : {shared, second_way})
        for (const Candidate& n : one_step_neighbours(walked, all))
            if (!contains(tried, n)) expected.insert(n.values);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(values_of(refinement.next(timed, tried)), expected);
}

// A refinement of warptile's 1024^3 candidates with one start and one round, started from a
// warptile configuration timed at 0.0603 ms; time() hands a batch's timings back to it.
struct RefinementAt1024 {
    explicit RefinementAt1024(const ParamValues& start_values)
        : all(enumerate_candidates(nn(1024, 1024, 1024), Arch{90}, {"warptile"})),
          warptile(find_family("warptile")),
          start{&warptile, start_values},
          refinement(all, nn(1024, 1024, 1024), h200(), walks(1, 1)),
          timed{{start, 0.0603}},
          tried{start} {}

    std::vector<Candidate> next() { return refinement.next(timed, tried); }
    void time(const std::vector<Candidate>& batch, const std::function<double(const Candidate&)>& ms) {
        for (const Candidate& c : batch) {
            tried.push_back(c);
            timed.push_back({c, ms(c)});
        }
    }

    std::vector<Candidate> all;
    const Family& warptile;
    Candidate start;
    Refinement refinement;
    std::vector<TimedCandidate> timed;
    std::vector<Candidate> tried;
};

// Groups of warps along k and split-K both spread k, and trade against each other: the sweep
// times every pair of them for the fastest tiles, each split count with both sums (in the
// kernel and the sum pass). On the H200 at 1024^3, 64x128 tiles of 8x8 took 0.0603 ms with 3
// slices, 0.0738 with 3 slices and 2 groups, 0.0661 with neither and 0.0591 with 2 groups and
// no slices: two moves from the first, through slower points.
TEST(Search, TheSweepCrossesSplitCountsWithGroupsOfWarpsAlongK) {
    RefinementAt1024 r({64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 3, 0, 0, 0, 0, 0});
    const Candidate best{&r.warptile, {64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 1, 0, 0, 0, 0, 0}};
    ASSERT_TRUE(contains(r.all, r.start));
    ASSERT_TRUE(contains(r.all, best));
    const std::vector<Candidate> walk = r.next();
    EXPECT_FALSE(contains(walk, best));
    r.time(walk, [](const Candidate&) { return 0.07; });
    const std::vector<Candidate> sweep = r.next();
    EXPECT_TRUE(contains(sweep, best));
    const std::size_t wk = r.warptile.param_index("WK"), splits = r.warptile.param_index("SPLITS"),
                      sum = r.warptile.param_index("SUM_PASS");
    ParamValues summed = best.values;
    summed[splits] = 8, summed[sum] = 1;
    EXPECT_TRUE(contains(sweep, Candidate{&r.warptile, summed}));
    for (const Candidate& c : sweep) {
        ParamValues other = c.values;
        other[wk] = r.start.values[wk];
        other[splits] = r.start.values[splits];
        other[sum] = r.start.values[sum];
        EXPECT_EQ(other, r.start.values) << c.describe();
    }
}

// When the sweep moves the best to a point no walk stood on, walks start there again: at
// 1024^3, 4 stages with 2 groups of warps and no slice are one step from the sweep's best
// (3 stages, 2 groups) and three from the walked point (3 stages, 1 group, 3 slices), and
// the sweep changes no stage count. With one round, that walk stops at its first move, and
// one more starts from the faster point it met; when that finds nothing faster, the end.
TEST(Search, AWalkStartsFromTheSweepsNewBest) {
    RefinementAt1024 r({128, 64, 16, 32, 64, 8, 8, 3, 0, 0, 1, 3, 1, 0, 0, 0, 0});
    const Candidate swept{&r.warptile, {128, 64, 16, 32, 64, 8, 8, 3, 0, 0, 2, 1, 1, 0, 0, 0, 0}};
    const Candidate deeper{&r.warptile, {128, 64, 16, 32, 64, 8, 8, 4, 0, 0, 2, 1, 1, 0, 0, 0, 0}};
    for (const Candidate& c : {r.start, swept, deeper}) ASSERT_TRUE(contains(r.all, c)) << c.describe();
    const auto ms = [&](const Candidate& c) { return c == swept ? 0.0585 : c == deeper ? 0.0573 : 0.07; };
    const std::vector<Candidate> walk = r.next();
    EXPECT_FALSE(contains(walk, swept));
    EXPECT_FALSE(contains(walk, deeper));
    r.time(walk, ms);
    const std::vector<Candidate> sweep = r.next();
    EXPECT_TRUE(contains(sweep, swept));
    EXPECT_FALSE(contains(sweep, deeper));
    r.time(sweep, ms);
    const std::vector<Candidate> walk_after_sweep = r.next();
    EXPECT_TRUE(contains(walk_after_sweep, deeper));
    for (const Candidate& c : walk_after_sweep) EXPECT_FALSE(contains(r.tried, c)) << c.describe();
    r.time(walk_after_sweep, ms);
    const std::vector<Candidate> walk_from_deeper = r.next();
    EXPECT_FALSE(walk_from_deeper.empty());
    for (const Candidate& c : walk_from_deeper) EXPECT_FALSE(contains(r.tried, c)) << c.describe();
    r.time(walk_from_deeper, ms);
    EXPECT_TRUE(r.next().empty());
}

// Once every one of the fastest has been walked from, a sweep that finds nothing faster ends
// the refinement.
TEST(Search, NoWalkFollowsASweepThatFoundNothingFaster) {
    RefinementAt1024 r({128, 64, 16, 32, 64, 8, 8, 3, 0, 0, 1, 3, 1, 0, 0, 0, 0});
    const std::vector<Candidate> walk = r.next();
    ASSERT_FALSE(walk.empty());
    const Candidate faster = walk.front();
    r.time(walk, [&](const Candidate& c) { return c == faster ? 0.059 : 0.07; });
    const std::vector<Candidate> walk_from_faster = r.next();  // one round: the first walk stopped
    ASSERT_FALSE(walk_from_faster.empty());
    for (const Candidate& c : walk_from_faster) EXPECT_FALSE(contains(r.tried, c)) << c.describe();
    r.time(walk_from_faster, [](const Candidate&) { return 0.07; });
    const std::vector<Candidate> sweep = r.next();
    ASSERT_FALSE(sweep.empty());
    r.time(sweep, [](const Candidate&) { return 0.07; });
    EXPECT_TRUE(r.next().empty());
}

// The sweep takes the fastest tiles, not the fastest timings: with two starts, when the two
// fastest timings are one tile's, the next tile is swept too.
TEST(Search, TheSplitSweepTakesTheFastestTilesNotTimings) {
    const ShapeKey key = nn(8, 4096, 4096);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"decode"});
    const Family& f = find_family("decode");
    const Candidate fastest{&f, {8, 128, 8, 2, 0, 0, 4, 0, 0}}, same_tile{&f, {8, 128, 8, 2, 0, 0, 8, 0, 0}}, next_tile{&f, {2, 64, 4, 2, 0, 0, 3, 0, 0}};
    ASSERT_NE(std::find(all.begin(), all.end(), next_tile), all.end());
    Refinement refinement(all, key, h200(), walks(2, 1));
    std::vector<TimedCandidate> timed = {{fastest, 0.9}, {same_tile, 0.95}, {next_tile, 1.0}};
    std::vector<Candidate> tried = {fastest, same_tile, next_tile};
    // The walks from the two fastest find nothing faster; the batch after them is the sweep,
    // the only batch that can hold next_tile's other split counts (they are no neighbours).
    std::vector<Candidate> sweep;
    for (int batches = 0; batches < 8 && sweep.empty(); ++batches) {
        const std::vector<Candidate> batch = refinement.next(timed, tried);
        ASSERT_FALSE(batch.empty()) << "refinement ended without sweeping next_tile";
        if (std::any_of(batch.begin(), batch.end(), [&](const Candidate& c) { return same_decode_tile(c, next_tile); }))
            sweep = batch;
        for (const Candidate& c : batch) {
            tried.push_back(c);
            timed.push_back({c, 2.0});
        }
    }
    std::vector<Candidate> expected;
    for (const Candidate& c : all)
        if ((same_decode_tile(c, fastest) || same_decode_tile(c, next_tile)) &&
            (std::find(sweep.begin(), sweep.end(), c) != sweep.end() ||
             std::find(tried.begin(), tried.end(), c) == tried.end()))
            expected.push_back(c);
    EXPECT_EQ(values_of(sweep), values_of(expected));
}

// Warptile candidates that differ at most in how they spread k (SPLITS, WK, SUM_PASS).
bool same_warptile_tile(const Candidate& a, const Candidate& b) {
    const std::size_t splits = a.family->param_index("SPLITS"), wk = a.family->param_index("WK"),
                      sum = a.family->param_index("SUM_PASS");
    for (std::size_t i = 0; i < a.values.size(); ++i)
        if (i != splits && i != wk && i != sum && a.values[i] != b.values[i]) return false;
    return true;
}

// A binary for aligned operands only and its twin with the fallback time first and second
// more often than not; the sweep takes them as one tile and sweeps the next tile too.
TEST(Search, TheSplitSweepTakesTwinsForAlignedOperandsAsOneTile) {
    const ShapeKey key = nn(1024, 1024, 1024);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"warptile"});
    const Family& f = find_family("warptile");
    const std::size_t aligned = f.param_index("ALIGNED"), splits = f.param_index("SPLITS"),
                      wk = f.param_index("WK"), bm = f.param_index("BM");
    auto unsplit = [&](const Candidate& c, int aligned_value) {
        return c.values[aligned] == aligned_value && c.values[splits] == 1 && c.values[wk] == 1;
    };
    const auto fastest = std::find_if(all.begin(), all.end(), [&](const Candidate& c) { return unsplit(c, 1); });
    ASSERT_NE(fastest, all.end());
    Candidate twin = *fastest;
    twin.values[aligned] = 0;
    ASSERT_TRUE(contains(all, twin));
    const auto next_tile = std::find_if(all.begin(), all.end(), [&](const Candidate& c) {
        return unsplit(c, 1) && c.values[bm] != fastest->values[bm];
    });
    ASSERT_NE(next_tile, all.end());

    Refinement refinement(all, key, h200(), walks(2, 1));
    std::vector<TimedCandidate> timed = {{*fastest, 0.9}, {twin, 0.95}, {*next_tile, 1.0}};
    std::vector<Candidate> tried = {*fastest, twin, *next_tile};
    std::vector<Candidate> sweep;
    for (int batches = 0; batches < 8 && sweep.empty(); ++batches) {
        const std::vector<Candidate> batch = refinement.next(timed, tried);
        ASSERT_FALSE(batch.empty()) << "refinement ended without sweeping next_tile";
        if (std::any_of(batch.begin(), batch.end(), [&](const Candidate& c) {
                return same_warptile_tile(c, *next_tile) && !contains(tried, c);
            }))
            sweep = batch;
        for (const Candidate& c : batch) {
            tried.push_back(c);
            timed.push_back({c, 2.0});
        }
    }
    // Every split count and group count of the faster twin and of the next tile; none of the
    // slower twin's that no walk met.
    for (const Candidate& c : all) {
        if (same_warptile_tile(c, *next_tile) || same_warptile_tile(c, *fastest)) {
            EXPECT_TRUE(contains(tried, c)) << c.describe();
        }
    }
    for (const Candidate& c : sweep) EXPECT_FALSE(same_warptile_tile(c, twin)) << c.describe();
}

// Timings shaped like a bowl around one configuration: refinement must walk to its bottom
// from wherever the model starts, and the replay must report that time.
TEST(Search, RefinementWalksDownhillToTheMinimum) {
    const ShapeKey key = nn(8, 4096, 4096);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"decode"});
    const Family& f = find_family("decode");
    const ParamValues target = {2, 64, 4, 2, 0, 0, 3, 0, 0};
    ASSERT_NE(std::find(all.begin(), all.end(), Candidate{&f, target}), all.end());
    auto place = [&](std::size_t param, int value) {
        const auto& list = f.params[param].values;
        return static_cast<int>(std::find(list.begin(), list.end(), value) - list.begin());
    };
    int timed = 0;
    const MeasuredTime bowl = [&](const Candidate& c) -> std::optional<double> {
        ++timed;
        double d = 1.0;
        for (std::size_t i = 0; i < target.size(); ++i) d += std::abs(place(i, c.values[i]) - place(i, target[i]));
        return d;
    };
    SearchPlan plan;
    plan.top_k = 4;
    plan.refine_starts = 1;
    plan.refine_rounds = 40;
    EXPECT_EQ(replay_model_search(all, key, h200(), plan, bowl), 1.0);
    // Downhill, not everywhere: walks that climbed would still reach the bottom from the
    // fastest point's restarts, but only after timing about 500 of the space's candidates.
    EXPECT_LE(timed, 150) << "of " << all.size() << " candidates";
    // Without refinement the model's top 4 alone do not contain the bottom: the walk is
    // what found it.
    plan.refine_starts = 0;
    EXPECT_GT(*replay_model_search(all, key, h200(), plan, bowl), 1.0);
}

// A walk needs a timed start. When none of the model's first picks can be timed (at 4096^3
// they are one 16x8 thread tile near the register limit: a spill would fail them all), the
// search picks again, rather than end with nothing timed and store cuBLAS as the winner; and
// not that tile again, whose BK, stage and split variants the model ranks next.
TEST(Search, WhenNoFirstPickCanBeTimedTheModelPicksAnotherTile) {
    const ShapeKey key = nn(4096, 4096, 4096);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {});
    const SearchPlan plan;
    const std::vector<Candidate> first = choose_candidates(all, key, h200(), plan, {});
    ASSERT_EQ(first.size(), static_cast<std::size_t>(plan.top_k));
    const Family& warptile = find_family("warptile");
    const std::size_t tm = warptile.param_index("TM"), tn = warptile.param_index("TN");
    const auto thread_tile = [&](const Candidate& c) {
        return c.family == &warptile ? std::optional<std::set<int>>({c.values[tm], c.values[tn]}) : std::nullopt;
    };
    for (const Candidate& c : first) ASSERT_EQ(thread_tile(c), std::set<int>({16, 8})) << c.describe();
    const auto spills = [&](const Candidate& c) { return thread_tile(c) == std::set<int>({16, 8}); };
    std::vector<Candidate> ranked_next;  // what picks by rank alone would time next
    for (const Candidate& c : choose_candidates(all, key, h200(), [&] {
             SearchPlan more = plan;
             more.top_k *= 2;
             return more;
         }(), {}))
        if (!contains(first, c)) ranked_next.push_back(c);
    ASSERT_FALSE(ranked_next.empty());
    EXPECT_TRUE(std::all_of(ranked_next.begin(), ranked_next.end(), spills)) << "the premise: by rank, the same tile";

    Refinement refinement(all, key, h200(), plan);
    const std::vector<Candidate> again = refinement.next({}, first);
    EXPECT_EQ(again.size(), first.size());
    for (const Candidate& c : again) {
        EXPECT_TRUE(contains(all, c)) << c.describe();
        EXPECT_FALSE(spills(c)) << c.describe();
    }

    const std::optional<double> best = replay_model_search(all, key, h200(), plan, [&](const Candidate& c) {
        return spills(c) ? std::nullopt : std::optional<double>(1.0);
    });
    EXPECT_EQ(best, 1.0);
}

// Where every untried candidate needs the registers of a failed one, they are still picked:
// the filter narrows the picks, it never ends the search.
TEST(Search, PicksAgainAmongTheFailedTilesWhereNoOtherIsLeft) {
    const ShapeKey key = nn(4096, 4096, 4096);
    const std::vector<Candidate> warptile = enumerate_candidates(key, Arch{90}, {"warptile"});
    ASSERT_FALSE(warptile.empty());
    const Candidate failed = warptile.front();
    const auto registers = [](const Candidate& c) { return c.family->estimated_registers(c.values); };
    std::vector<Candidate> same_registers;
    for (const Candidate& c : warptile)
        if (registers(c) == registers(failed)) same_registers.push_back(c);
    ASSERT_GT(same_registers.size(), 1u);
    Refinement refinement(same_registers, key, h200(), SearchPlan{});
    const std::vector<Candidate> again = refinement.next({}, {failed});
    EXPECT_FALSE(again.empty());
    EXPECT_FALSE(contains(again, failed));
}

// Picking again is bounded: where nothing can be timed at all, the search ends after
// Refinement::kMorePicks more rounds of picks, not after the whole space (33013 candidates
// at 7x17x1000, one compile for each few).
TEST(Search, WhereNothingCanBeTimedThePicksEndAfterAFewRounds) {
    const ShapeKey key = nn(7, 17, 1000);
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {});
    const SearchPlan plan;
    std::vector<Candidate> tried;
    const std::optional<double> best = replay_model_search(all, key, h200(), plan, [&](const Candidate& c) {
        EXPECT_FALSE(contains(tried, c)) << c.describe() << " was handed out twice";
        tried.push_back(c);
        return std::optional<double>();
    });
    EXPECT_FALSE(best.has_value());
    EXPECT_EQ(tried.size(), static_cast<std::size_t>((1 + Refinement::kMorePicks) * plan.top_k));
}

}  // namespace

namespace {

// A dry run for another arch ranks candidates for a GPU of that arch, not for an H200.
TEST(Search, ADryRunPlansForAGpuOfItsArch) {
    EXPECT_EQ(planning_model(Arch{90}).name, "H200");
    EXPECT_EQ(planning_model(Arch{90}).sm_count, 132);
    EXPECT_EQ(planning_model(Arch{80}).name, "A100-80GB");
    EXPECT_EQ(planning_model(Arch{80}).sm_count, 108);
    EXPECT_EQ(planning_model(Arch{80}).limits.sm, 80);
    EXPECT_EQ(planning_model(Arch{75}).name, "T4");
    EXPECT_EQ(planning_model(Arch{89}).name, "RTX 3090");  // the newest below it with a built-in GPU
    EXPECT_EQ(planning_model(Arch{89}).arch.sm, 89);       // but compiled for its own arch
    EXPECT_EQ(planning_model(Arch{100}).name, "H200");
    EXPECT_EQ(planning_gpu(Arch{89}).sm, 86);
    EXPECT_EQ(planning_gpu(Arch{90}).sm, 90);
    EXPECT_THROW(planning_model(Arch{70}), Error);
    // The ranking follows: an A100's bandwidth is under half an H200's, so a decode GEMM costs more.
    const ShapeKey key = nn(8, 4096, 4096);
    const Candidate c{&find_family("decode"), {8, 256, 4, 4, 0, 0, 1, 0, 0}};
    EXPECT_GT(estimate_cost(c, key, planning_model(Arch{80})).seconds, 1.5 * estimate_cost(c, key, h200()).seconds);
}

}  // namespace
