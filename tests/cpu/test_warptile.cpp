// The warptile family without a GPU: its space is pruned but not empty, a spread-out sample
// of the configurations the tuner may pick compiles for sm_80 and sm_90 without spills, and
// its geometry, shared memory, workspace and transposes are what the template expects.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "templates/sgemm_common.cuh"
#include "templates/sgemm_staging.cuh"
#include "tests/cpu/compile_samples.h"

using namespace sgemm;

namespace {

const Family& warptile() { return find_family("warptile"); }

std::vector<ParamValues> distinct_binaries(Arch arch) { return sgemm::testing::distinct_binaries(warptile(), arch); }

TEST(Warptile, TheSpaceIsPrunedButNotEmpty) {
    const Family& f = warptile();
    std::size_t product = 1;
    for (const ParamSpec& p : f.params) product *= p.values.size();
    const auto valid = f.valid_configs(Arch{90});
    EXPECT_LT(valid.size(), product);
    // Per transpose layout about 360 tiles (with their groups of warps along k), and NN's
    // again as tiles of C^T (CT = 1), each with every split count: five binaries per tile,
    // one that does not split and four that do, summing their slices in the kernel, in a sum
    // pass (SUM_PASS = 1, a second kernel), by atomics (SUM_PASS = 2) or by turns on C
    // (SUM_PASS = 3). With a stream-K tail
    // (SK = 1, for tiles that neither split nor group warps) a tile has a sixth binary,
    // holding the tail too. Each
    // binary comes twice: with the 4-byte fallback of its 16-byte accesses and, for calls
    // whose operands are all aligned (ALIGNED = 1), without it; the binaries that neither
    // split nor have a tail come a third time, staging their operands (ALIGNED = 2). Where
    // B's place holds rows of x (NT, TT, NN's tiles of C^T), tiles of up to 64 accumulators
    // also come with BK 32 and KMAJOR.
    std::size_t valid_aligned_only = 0, valid_staged = 0, valid_whole = 0;
    for (const ParamValues& v : valid) {
        const int aligned = f.value(v, "ALIGNED");
        if (aligned == 0 && f.value(v, "SPLITS") == 1 && f.value(v, "SK") == 0) ++valid_whole;
        if (aligned == 0) continue;
        ++(aligned == 1 ? valid_aligned_only : valid_staged);
        ParamValues twin = v;
        twin[f.param_index("ALIGNED")] = 0;
        EXPECT_EQ(f.invalid_reason(twin, Arch{90}), "") << f.describe(v);
    }
    EXPECT_GT(valid_staged, 0u);
    EXPECT_EQ(valid_staged, valid_whole);
    EXPECT_EQ(2 * valid_aligned_only + valid_staged, valid.size());
    const auto binaries = distinct_binaries(Arch{90});
    std::size_t valid_with_tail = 0, binaries_with_tail = 0;
    for (const ParamValues& v : valid)
        if (f.value(v, "SK")) {
            ++valid_with_tail;
            EXPECT_EQ(f.value(v, "SPLITS") * f.value(v, "WK"), 1);
            ParamValues twin = v;
            twin[f.param_index("SK")] = 0;
            EXPECT_EQ(f.invalid_reason(twin, Arch{90}), "") << f.describe(v);
        }
    for (const ParamValues& v : binaries) binaries_with_tail += f.value(v, "SK");
    EXPECT_EQ(valid_with_tail, binaries_with_tail);
    EXPECT_GT(valid_with_tail, 0u);
    std::size_t valid_with_sum_pass = 0;
    for (const ParamValues& v : valid)
        if (f.value(v, "SUM_PASS")) {
            ++valid_with_sum_pass;
            EXPECT_GT(f.value(v, "SPLITS"), 1);
            // Its twin summed in the kernel is valid too, up to 8 slices (pass, atomics or turns).
            ParamValues twin = v;
            twin[f.param_index("SUM_PASS")] = 0;
            EXPECT_EQ(f.invalid_reason(twin, Arch{90}).empty(), f.value(v, "SPLITS") <= 8) << f.describe(v);
        }
    EXPECT_GT(valid_with_sum_pass, 0u);
    // A tile's valid points: SPLITS 1, each larger split count up to 8 with any of the four
    // sums, and the counts above 8 with the sum pass, atomics or turns only.
    std::size_t split_counts_any_sum = 0, split_counts_not_in_kernel = 0;
    for (int splits : f.params[f.param_index("SPLITS")].values)
        if (splits > 1) ++(splits > 8 ? split_counts_not_in_kernel : split_counts_any_sum);
    EXPECT_GT(split_counts_not_in_kernel, 0u);
    // Staging binaries neither split nor have a tail: one configuration each.
    std::size_t binaries_staged = 0;
    for (const ParamValues& v : binaries) binaries_staged += f.stages_operands(v);
    EXPECT_EQ(binaries_staged, valid_staged);
    const std::size_t plain_binaries = binaries.size() - binaries_with_tail - binaries_staged;
    EXPECT_EQ(5 * (valid.size() - valid_with_tail - valid_staged),
              (1 + 4 * split_counts_any_sum + 3 * split_counts_not_in_kernel) * plain_binaries);
    EXPECT_GE(plain_binaries / 30, 200u);
    EXPECT_LE(plain_binaries / 30, 800u);
    std::size_t k_major = 0;
    for (const ParamValues& v : valid) k_major += f.value(v, "KMAJOR");
    EXPECT_GT(k_major, 0u);
    EXPECT_LT(k_major, valid.size() / 5);
    std::set<std::tuple<int, int, int>> layouts;
    for (const ParamValues& v : binaries) layouts.insert({f.value(v, "TA"), f.value(v, "TB"), f.value(v, "CT")});
    EXPECT_EQ(layouts, (std::set<std::tuple<int, int, int>>{{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}}));
    // sm_80 has the same space but for the stream-K tails that spill there, and the stages
    // of BK 32 that need more shared memory than its blocks may have.
    std::size_t not_before_sm90 = 0, too_large_for_sm80 = 0;
    const int sm80_shared = arch_limits(Arch{80}).max_shared_per_block;
    for (const ParamValues& v : valid) {
        const bool spills = f.value(v, "SK") && f.value(v, "CT") && f.value(v, "TM") * f.value(v, "TN") >= 128;
        const bool too_large = static_cast<int>(f.geometry(v, 1, 1, 1).dynamic_shared_bytes) > sm80_shared;
        not_before_sm90 += spills || too_large;
        too_large_for_sm80 += too_large;
    }
    EXPECT_GT(too_large_for_sm80, 0u);
    EXPECT_GT(not_before_sm90, too_large_for_sm80);
    EXPECT_EQ(f.valid_configs(Arch{80}).size(), valid.size() - not_before_sm90);
    EXPECT_TRUE(f.valid_configs(Arch{75}).empty());
}

TEST(Warptile, ConstraintsSayWhy) {
    const Family& f = warptile();
    // BM BN BK WM WN TM TN STAGES TA TB WK SPLITS CT SK ALIGNED
    EXPECT_NE(f.invalid_reason({128, 128, 8, 64, 64, 8, 8, 3, 0, 0, 1, 1, 0, 0, 0, 0, 0}, Arch{90}).find("32 lanes"), std::string::npos);
    // Warps must divide the tile; outside the lists, so asked of the constraint itself.
    EXPECT_NE(f.constraint_violation({96, 128, 8, 64, 64, 8, 16, 3, 0, 0, 1, 1, 0, 0, 0, 0, 0}, arch_limits(Arch{90})).find("multiple of WM"),
              std::string::npos);
    EXPECT_NE(f.invalid_reason({128, 128, 8, 64, 64, 16, 8, 2, 0, 0, 1, 1, 0, 0, 0, 0, 0}, Arch{90}).find("in flight"),
              std::string::npos);
    // 256x128 with 16 warps of 32x64: 512 threads of about 136 registers overflow the SM.
    EXPECT_NE(f.invalid_reason({256, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 1, 0, 0, 0, 0, 0}, Arch{90}).find("registers"),
              std::string::npos);
    // The largest stages (4 x 16 k of 256 + 4 and 132 floats: 100352 bytes) need the opt-in.
    const ParamValues big = {256, 128, 16, 64, 64, 16, 8, 4, 0, 1, 1, 1, 0, 0, 0, 0, 0};
    EXPECT_EQ(f.invalid_reason(big, Arch{90}), "");
    ArchLimits small = arch_limits(Arch{90});
    small.max_shared_per_block = 96 * 1024;
    EXPECT_NE(f.constraint_violation(big, small).find("100352 bytes of shared memory"), std::string::npos);
    // Groups of warps along k: 8 warps at most, so the default's 8 warps take no second group.
    ParamValues grouped = f.defaults;
    grouped[10] = 2;
    EXPECT_NE(f.invalid_reason(grouped, Arch{90}).find("at most 8 warps"), std::string::npos);
    EXPECT_EQ(f.invalid_reason({64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 0, 0, 0}, Arch{90}), "");
    // More groups pass the constraint where the warps stay few (a value outside the list, so
    // asked of the constraint itself).
    EXPECT_EQ(f.constraint_violation({32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 4, 8, 0, 0, 0, 0, 0}, arch_limits(Arch{90})), "");
    // ... as long as each group's run of k has an even length (8 k over 8 groups: 1).
    EXPECT_NE(f.constraint_violation({32, 64, 8, 32, 64, 8, 8, 3, 0, 0, 8, 1, 0, 0, 0, 0, 0}, arch_limits(Arch{90})).find("even length"),
              std::string::npos);
    // A stream-K tail shares k itself: not with split-K, nor with groups of warps.
    EXPECT_NE(f.invalid_reason({128, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 4, 0, 1, 0, 0, 0}, Arch{90}).find("SK = 1"), std::string::npos);
    EXPECT_NE(f.invalid_reason({64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 1, 0, 1, 0, 0, 0}, Arch{90}).find("SK = 1"), std::string::npos);
    // Before sm_90 a tail of tiles of C^T with 128 accumulators a thread spills.
    const ParamValues tail_of_ct = {256, 64, 8, 64, 64, 16, 8, 3, 0, 0, 1, 1, 1, 1, 0, 0, 0};
    EXPECT_EQ(f.invalid_reason(tail_of_ct, Arch{90}), "");
    EXPECT_NE(f.invalid_reason(tail_of_ct, Arch{80}).find("spills before sm_90"), std::string::npos);
}

// KMAJOR = 1 keeps rows of x in B's place as stored: [x][BK + 4] floats per stage, read 4 k at
// a time from two buffers. It goes with BK 32, and BK 32 with it.
TEST(Warptile, KMajorKeepsRowsOfXInBsPlace) {
    const Family& f = warptile();
    // BM BN BK WM WN TM TN STAGES TA TB WK SPLITS CT SK ALIGNED KMAJOR
    const ParamValues nt = {32, 128, 32, 32, 64, 8, 8, 3, 0, 1, 2, 8, 0, 0, 1, 1, 0};
    EXPECT_EQ(f.invalid_reason(nt, Arch{90}), "");
    EXPECT_EQ(f.name_expression(nt), "sgemm_warptile<32, 128, 32, 32, 64, 8, 8, 3, 0, 1, 2, true, 0, 1, 1, 0>");
    // A: 32 k of 32 + 4 floats; B: 128 rows of 32 + 4 floats; three stages.
    EXPECT_EQ(f.geometry(nt, 32, 4096, 4096).dynamic_shared_bytes, 4u * 3 * (32 * 36 + 128 * 36));
    ParamValues nn = nt;
    nn[9] = 0;  // TB: B's place holds rows of k
    EXPECT_NE(f.invalid_reason(nn, Arch{90}).find("KMAJOR = 1 keeps"), std::string::npos);
    nn[12] = 1;  // CT: A, rows of x, in B's place
    EXPECT_EQ(f.invalid_reason(nn, Arch{90}), "");
    ParamValues shorter = nt;
    shorter[2] = 16;  // KMAJOR with BK 16
    EXPECT_NE(f.invalid_reason(shorter, Arch{90}).find("BK 32 and KMAJOR = 1 go together"), std::string::npos);
    ParamValues transposing = nt;
    transposing[15] = 0;  // BK 32 without KMAJOR
    EXPECT_NE(f.invalid_reason(transposing, Arch{90}).find("BK 32 and KMAJOR = 1 go together"), std::string::npos);
    transposing[2] = 16;
    EXPECT_EQ(f.invalid_reason(transposing, Arch{90}), "");
    // 16x8 thread tiles hold 128 accumulators: the chunks' registers do not fit beside them.
    const ParamValues tall = {128, 128, 32, 64, 64, 16, 8, 3, 0, 1, 1, 1, 0, 0, 0, 1, 0};
    EXPECT_NE(f.invalid_reason(tall, Arch{90}).find("registers"), std::string::npos);
}

// SK = 1: the tail is a second kernel of the same template arguments (SK is not one), its
// symbol follows from the main kernel's, and a launch gives it the tiles past the last whole
// wave, two blocks per SM, with a workspace of two partial tiles per SM.
TEST(Warptile, StreamKTail) {
    const Family& f = warptile();
    ParamValues v = f.defaults;
    EXPECT_FALSE(f.has_stream_k_tail(v));
    EXPECT_EQ(f.second_name_expression(v), "");
    v[13] = 1;  // SK
    EXPECT_TRUE(f.has_stream_k_tail(v));
    EXPECT_EQ(f.name_expression(v), "sgemm_warptile<256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, false, 0, 0, 0, 0>");
    EXPECT_EQ(f.second_name_expression(v), "sgemm_warptile_stream_k<256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, false, 0, 0, 0, 0>");
    EXPECT_EQ(f.second_symbol(v, "_Z14sgemm_warptileILi1EEv9SgemmArgs"), "_Z23sgemm_warptile_stream_kILi1EEv9SgemmArgs");
    EXPECT_THROW(f.second_symbol(v, "_Z11sgemm_asyncILi1EEv9SgemmArgs"), Error);
    // 4096^3: 16 x 32 = 512 tiles on 132 SMs, 3 whole waves and 116 tiles for the tail.
    const StreamKSplit split = f.stream_k_split(v, 4096, 4096, 4096, 132);
    EXPECT_EQ(split.main_blocks, 396u);
    EXPECT_EQ(split.tail_blocks, 264u);
    EXPECT_EQ(f.workspace_bytes(v, 4096, 4096, 4096, 132, 16), SGEMM_WORKSPACE_COUNTER_BYTES + 2ull * 132 * 256 * 128 * 4);
    // 528 tiles (4095x4097) fill 4 waves: no tail, no workspace; nor without SK.
    EXPECT_EQ(f.stream_k_split(v, 4095, 4097, 4093, 132).tail_blocks, 0u);
    EXPECT_EQ(f.stream_k_split(v, 4095, 4097, 4093, 132).main_blocks, 528u);
    EXPECT_EQ(f.workspace_bytes(v, 4095, 4097, 4093, 132, 16), 0u);
    EXPECT_EQ(f.stream_k_split(f.defaults, 4096, 4096, 4096, 132).tail_blocks, 0u);
    // Fewer tiles than SMs: all of them go to the tail.
    EXPECT_EQ(f.stream_k_split(v, 1000, 3000, 2000, 132).main_blocks, 0u);
    // The tail counts shared tiles times k tiles in an int: 116 shared tiles of K = 2^31 / 116
    // would reach 2^31, so the main kernel takes them all; one k less still has a tail.
    const int K = (1 << 30) / 58;  // 116 * K just below 2^31
    EXPECT_EQ(f.stream_k_split(v, 4096, 4096, K, 132).tail_blocks, 264u);
    EXPECT_EQ(f.stream_k_split(v, 4096, 4096, K + 1, 132).tail_blocks, 0u);
    EXPECT_EQ(f.stream_k_split(v, 4096, 4096, K + 1, 132).main_blocks, 512u);
}

// NVRTC's symbol for the tail is the one Family::second_symbol derives (compile_kernel checks
// it), the binary is not SK = 0's, and neither kernel spills.
TEST(Warptile, StreamKTailCompiles) {
    const Family& f = warptile();
    ParamValues v = {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 1, 0, 0, 0};
    const CompiledKernel k = compile_kernel(f, v, Arch{90});
    EXPECT_EQ(k.second_lowered_name, f.second_symbol(v, k.lowered_name));
    EXPECT_NE(k.second_lowered_name.find("sgemm_warptile_stream_k"), std::string::npos);
    EXPECT_FALSE(k.ptxas.spills()) << k.log;
    v[13] = 0;
    EXPECT_NE(kernel_cache_key(f, v, Arch{90}), k.cache_key);
    EXPECT_EQ(compile_kernel(f, v, Arch{90}).second_lowered_name, "");
}

// SUM_PASS = 1: a split launch leaves the sum of its slices to a second kernel of the same
// template arguments, whose symbol follows from the main kernel's. It needs slices. Its
// launch covers C in groups of 4 elements, SGEMM_SUM_PASS_QUADS groups a block, with a row of
// threads per slice; the workspace is split-K's. Both kernels compile without spills.
TEST(Warptile, SumPass) {
    const Family& f = warptile();
    const ParamValues v = {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 1, 0, 1};
    EXPECT_EQ(f.invalid_reason(v, Arch{90}), "");
    EXPECT_TRUE(f.has_sum_pass(v));
    EXPECT_FALSE(f.has_stream_k_tail(v));
    EXPECT_EQ(f.second_name_expression(v),
              "sgemm_warptile_sum_pass<32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, true, 0, 1, 0, 1>");
    EXPECT_EQ(f.second_symbol(v, "_Z14sgemm_warptileILi1EEv9SgemmArgs"), "_Z23sgemm_warptile_sum_passILi1EEv9SgemmArgs");
    const LaunchGeometry pass = f.second_geometry(v, 32, 6144, 4096, 132, 16);
    EXPECT_EQ(pass.grid.x, 32u * 6144 / 4 / SGEMM_SUM_PASS_QUADS);
    EXPECT_EQ(pass.block.x, unsigned(SGEMM_SUM_PASS_QUADS));
    EXPECT_EQ(pass.block.y, 8u);
    EXPECT_EQ(pass.dynamic_shared_bytes, 16u * SGEMM_SUM_PASS_QUADS * 8);
    EXPECT_EQ(f.second_geometry(v, 7, 17, 5, 132, 16).grid.x, 1u);  // 119 elements: 30 groups
    EXPECT_EQ(f.second_geometry(v, 1, 4 * SGEMM_SUM_PASS_QUADS + 1, 5, 132, 16).grid.x, 2u);
    EXPECT_EQ(f.workspace_bytes(v, 32, 6144, 4096, 132, 16), sgemm_splitk_workspace_bytes(8, 32, 6144));
    ParamValues in_kernel = v, unsplit = v;
    in_kernel[16] = 0;
    EXPECT_EQ(f.second_name_expression(in_kernel), "");
    EXPECT_EQ(f.second_geometry(in_kernel, 32, 6144, 4096, 132, 16).grid.x, 0u);
    unsplit[11] = 1;  // SPLITS
    EXPECT_NE(f.invalid_reason(unsplit, Arch{90}).find("SUM_PASS = 1"), std::string::npos);
    for (int sm : {80, 90}) {
        const CompiledKernel k = compile_kernel(f, v, Arch{sm});
        EXPECT_EQ(k.second_lowered_name, f.second_symbol(v, k.lowered_name));
        EXPECT_NE(k.second_lowered_name.find("sgemm_warptile_sum_pass"), std::string::npos);
        EXPECT_FALSE(k.ptxas.spills()) << k.log;
        EXPECT_LT(k.ptxas.shared_bytes, 1024) << "the sum pass's shared memory is dynamic: static, it counts against "
                                                 "the main kernel's";
        EXPECT_NE(kernel_cache_key(f, in_kernel, Arch{sm}), k.cache_key);
    }
}

// A stored row is not judged by the family's constraints (dispatch skips only what it cannot
// run), so the second kernel's launch must be that kernel's own even for values the
// constraints refuse: a stream-K tail with a sum pass, or with staged operands, launches the
// tail, on the main kernel's blocks.
TEST(Warptile, TheSecondLaunchIsTheSecondKernelsOwn) {
    const Family& f = warptile();
    ParamValues tail_and_pass = {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 1, 0, 1};
    tail_and_pass[f.param_index("SK")] = 1;
    ParamValues tail_and_staging = tail_and_pass;
    tail_and_staging[f.param_index("SUM_PASS")] = 0;
    tail_and_staging[f.param_index("SPLITS")] = 1;
    tail_and_staging[f.param_index("ALIGNED")] = 2;
    for (const ParamValues& v : {tail_and_pass, tail_and_staging}) {
        SCOPED_TRACE(f.describe(v));
        EXPECT_NE(f.invalid_reason(v, Arch{90}), "");
        ASSERT_EQ(f.second_kernel(v), f.tail_kernel);
        const LaunchGeometry main = f.geometry(v, 300, 300, 4096);
        const LaunchGeometry second = f.second_geometry(v, 300, 300, 4096, 7, 4);
        EXPECT_EQ(second.grid.x, f.stream_k_split(v, 300, 300, 4096, 7).tail_blocks);
        EXPECT_EQ(second.block.x, main.block.x);
        EXPECT_EQ(second.block.y, main.block.y);
        EXPECT_EQ(second.dynamic_shared_bytes, main.dynamic_shared_bytes);
    }
}

// SUM_PASS = 2: the slices add into C with atomics. No second kernel, a workspace of the
// tile counters alone however large C is, more than 8 slices allowed, no call without
// slices; its own binary (its protocol differs), compiled without spills for sm_80 (scalar
// atomics) and sm_90 (16-byte red.add.v4.f32).
TEST(Warptile, AtomicSums) {
    const Family& f = warptile();
    const ParamValues v = {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 16, 0, 0, 1, 0, 2};
    EXPECT_EQ(f.invalid_reason(v, Arch{90}), "");
    EXPECT_TRUE(f.sums_with_atomics(v));
    EXPECT_FALSE(f.has_sum_pass(v));
    EXPECT_EQ(f.second_kernel(v), "");
    EXPECT_EQ(f.second_geometry(v, 32, 6144, 4096, 132, 16).grid.x, 0u);
    EXPECT_EQ(f.workspace_bytes(v, 32, 6144, 4096, 132, 16), SGEMM_WORKSPACE_COUNTER_BYTES);
    EXPECT_EQ(f.workspace_bytes(v, 8192, 8192, 4096, 132, 16), SGEMM_WORKSPACE_COUNTER_BYTES);
    ParamValues pass = v, in_kernel = v, unsplit = v;
    pass[16] = SGEMM_SUM_BY_PASS;
    in_kernel[16] = SGEMM_SUM_BY_LAST_BLOCK;
    EXPECT_FALSE(f.sums_with_atomics(pass));
    EXPECT_FALSE(f.sums_with_atomics(in_kernel));
    EXPECT_NE(f.invalid_reason(in_kernel, Arch{90}).find("SPLITS 16 goes with SUM_PASS = 1, 2 or 3"), std::string::npos);
    unsplit[11] = 1;  // SPLITS
    EXPECT_NE(f.invalid_reason(unsplit, Arch{90}).find("SUM_PASS = 2 sums the slices of a split launch by atomics"),
              std::string::npos);
    in_kernel[11] = 8;
    for (int sm : {80, 90}) {
        const CompiledKernel k = compile_kernel(f, v, Arch{sm});
        EXPECT_FALSE(k.ptxas.spills()) << k.log;
        EXPECT_EQ(k.second_lowered_name, "");
        EXPECT_NE(kernel_cache_key(f, in_kernel, Arch{sm}), k.cache_key);
        EXPECT_NE(kernel_cache_key(f, pass, Arch{sm}), k.cache_key);
    }
}

// SUM_PASS = 3: the slices of a tile add into C in turn. No second kernel, no atomics, a
// workspace of the tile counters alone however large C is, more than 8 slices allowed, no
// call without slices; its own binary, compiled without spills for sm_80 and sm_90, also
// with 16x8 and 8x16 thread tiles (whose epilogue holds a chunk of C's quads besides the
// 128 accumulators).
TEST(Warptile, SumsByTurnsOnC) {
    const Family& f = warptile();
    const ParamValues v = {32, 256, 16, 32, 64, 8, 8, 2, 0, 0, 1, 16, 0, 0, 1, 0, 3};
    EXPECT_EQ(f.invalid_reason(v, Arch{90}), "");
    EXPECT_TRUE(f.sums_in_order(v));
    EXPECT_FALSE(f.sums_with_atomics(v));
    EXPECT_FALSE(f.has_sum_pass(v));
    EXPECT_EQ(f.second_kernel(v), "");
    EXPECT_EQ(f.workspace_bytes(v, 32, 128256, 4096, 132, 16), SGEMM_WORKSPACE_COUNTER_BYTES);
    EXPECT_EQ(f.workspace_bytes(v, 8192, 8192, 4096, 132, 16), SGEMM_WORKSPACE_COUNTER_BYTES);
    ParamValues atomics = v, unsplit = v;
    atomics[16] = SGEMM_SUM_BY_ATOMICS;
    EXPECT_FALSE(f.sums_in_order(atomics));
    unsplit[11] = 1;  // SPLITS
    EXPECT_NE(f.invalid_reason(unsplit, Arch{90}).find("SUM_PASS = 3 sums the slices of a split launch by turns on C"),
              std::string::npos);
    for (const ParamValues& config : {v, ParamValues{256, 64, 16, 64, 64, 8, 16, 2, 0, 0, 1, 4, 1, 0, 1, 0, 3},
                                      ParamValues{256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, 4, 0, 0, 0, 0, 3}})
        for (int sm : {80, 90}) {
            const CompiledKernel k = compile_kernel(f, config, Arch{sm});
            EXPECT_FALSE(k.ptxas.spills()) << f.describe(config) << " sm_" << sm << ": " << k.log;
            EXPECT_EQ(k.ptxas.stack_bytes, 0) << f.describe(config) << " sm_" << sm;  // old[] in registers
            EXPECT_EQ(k.second_lowered_name, "");
        }
    EXPECT_NE(kernel_cache_key(f, atomics, Arch{90}), kernel_cache_key(f, v, Arch{90}));
}

TEST(Warptile, GeometrySharedMemoryAndWorkspace) {
    const Family& f = warptile();
    const ParamValues v = {256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, 4, 0, 0, 0, 0, 0};
    const LaunchGeometry g = f.geometry(v, 4095, 4097, 4093);
    EXPECT_EQ(g.grid.x, 16u * 33u);  // ceil(4095/256) x ceil(4097/128) tiles of C
    EXPECT_EQ(g.grid.y, 4u);         // the k slices
    EXPECT_EQ(g.grid.z, 1u);
    EXPECT_EQ(g.block.x, 256u);      // 4 x 2 warps of 64 x 64
    // 3 stages of 16 k: A transposed into 256 + 4 floats a row, B as is, 128 a row.
    EXPECT_EQ(g.dynamic_shared_bytes, 4u * 3 * 16 * (260 + 128));
    // TA=1 reads A as is; TB=1 transposes B.
    EXPECT_EQ(f.geometry({256, 128, 16, 64, 64, 16, 8, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0}, 8, 8, 8).dynamic_shared_bytes,
              4u * 3 * 16 * (256 + 132));
    EXPECT_EQ(f.workspace_bytes(v, 100, 200, 300, 132, 16), SGEMM_WORKSPACE_COUNTER_BYTES + 4u * 4 * 100 * 200);
    EXPECT_EQ(f.workspace_bytes(f.defaults, 100, 200, 300, 132, 16), 0u);
}

// WK groups of warps share each k tile: the block has WK times the threads, and shared
// memory also holds the other groups' partial tiles at the end, when they are larger than
// the stages.
TEST(Warptile, GroupsOfWarpsAlongK) {
    const Family& f = warptile();
    const ParamValues two = {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 0, 0, 0};
    const LaunchGeometry g2 = f.geometry(two, 32, 6144, 4096);
    EXPECT_EQ(g2.grid.x, 48u);
    EXPECT_EQ(g2.grid.y, 8u);
    EXPECT_EQ(g2.block.x, 2u * 64u);  // two groups of the 2 warps of 32 x 64
    EXPECT_EQ(g2.dynamic_shared_bytes, 4u * 3 * 16 * (36 + 128));  // stages: 31488 > 1 x 32 x 128 x 4
    const ParamValues wide = {64, 128, 16, 32, 64, 8, 8, 2, 0, 0, 2, 1, 0, 0, 0, 0, 0};
    const LaunchGeometry g = f.geometry(wide, 1024, 1024, 1024);
    EXPECT_EQ(g.block.x, 2u * 4u * 32u);
    EXPECT_EQ(g.dynamic_shared_bytes, 4u * 64 * 128);  // the partial tile: 32768 > 25088 of stages
    EXPECT_EQ(f.name_expression(wide), "sgemm_warptile<64, 128, 16, 32, 64, 8, 8, 2, 0, 0, 2, false, 0, 0, 0, 0>");
}

// CT = 1 tiles C^T: the grid covers N by BM and M by BN, B sits in the tile's A place (as
// rows of k in NN: no padding) and A in B's (transposed: padded), and only NN may use it.
TEST(Warptile, TilesOfCTransposedServeNNOnly) {
    const Family& f = warptile();
    ParamValues v = f.defaults;
    v[12] = 1;  // CT
    EXPECT_EQ(f.invalid_reason(v, Arch{90}), "");
    const LaunchGeometry g = f.geometry(v, 4095, 4097, 4093);
    EXPECT_EQ(g.grid.x, 17u * 32u);  // ceil(4097/256) x ceil(4095/128) tiles of C^T
    EXPECT_EQ(g.dynamic_shared_bytes, 4u * 3 * 16 * (256 + 132));
    EXPECT_TRUE(f.reads_transposes(v, false, false));
    for (const auto& [ta, tb] : {std::pair{0, 1}, std::pair{1, 0}, std::pair{1, 1}}) {
        v[8] = ta, v[9] = tb;
        EXPECT_NE(f.invalid_reason(v, Arch{90}).find("serves only NN"), std::string::npos) << ta << tb;
    }
}

TEST(Warptile, ReadsTheTransposesItsParametersName) {
    const Family& f = warptile();
    for (int ta : {0, 1})
        for (int tb : {0, 1}) {
            ParamValues v = f.defaults;
            v[8] = ta, v[9] = tb;
            EXPECT_TRUE(f.reads_transposes(v, ta, tb));
            EXPECT_FALSE(f.reads_transposes(v, !ta, tb));
            EXPECT_FALSE(f.reads_transposes(v, ta, !tb));
        }
}

TEST(Warptile, SplitCountsAboveOneShareABinaryWithoutSplitsAnother) {
    const Family& f = warptile();
    ParamValues split2 = f.defaults, split8 = f.defaults;
    split2[11] = 2;  // SPLITS
    split8[11] = 8;
    EXPECT_EQ(f.name_expression(f.defaults), "sgemm_warptile<256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, false, 0, 0, 0, 0>");
    EXPECT_EQ(f.name_expression(split8), "sgemm_warptile<256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, true, 0, 0, 0, 0>");
    EXPECT_EQ(kernel_cache_key(f, split2, Arch{90}), kernel_cache_key(f, split8, Arch{90}));
    EXPECT_NE(kernel_cache_key(f, f.defaults, Arch{90}), kernel_cache_key(f, split8, Arch{90}));
}

// Twenty binaries: for sm_80 and sm_90 and each transpose layout (NN twice, as tiles of C
// and of C^T), one without split-K from the first half of the layout's list (tiles, BK,
// stages) and one with it from the second half. None may spill.
TEST(Warptile, ASampleOfTheSpaceCompilesWithoutSpills) {
    const Family& f = warptile();
    const std::tuple<int, int, int> layouts[] = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}};  // TA TB CT
    for (int sm : {80, 90})
        for (const auto& [ta, tb, ct] : layouts) {
            std::vector<ParamValues> whole, split;
            for (const ParamValues& v : distinct_binaries(Arch{sm}))
                if (f.value(v, "TA") == ta && f.value(v, "TB") == tb && f.value(v, "CT") == ct)
                    (f.value(v, "SPLITS") > 1 ? split : whole).push_back(v);
            ASSERT_GE(whole.size(), 2u);
            ASSERT_GE(split.size(), 2u);
            sgemm::testing::expect_compiles_without_spills(f, sgemm::testing::spread_sample(whole, 2)[0], Arch{sm});
            sgemm::testing::expect_compiles_without_spills(f, sgemm::testing::spread_sample(split, 2)[1], Arch{sm});
        }
}

// With ALIGNED = 1 the copies of operands stored as rows of k, and the epilogue, carry no
// 4-byte fallback: the binary holds less code than its twin. TN copies both operands as rows
// of k, NN's tiles of C^T one (B).
TEST(Warptile, BinariesForAlignedOperandsLeaveTheFallbackOut) {
    const Family& f = warptile();
    for (const ParamValues& fallback : {ParamValues{128, 128, 16, 32, 64, 8, 8, 3, 1, 0, 1, 1, 0, 0, 0, 0, 0},
                                        ParamValues{256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 0, 0, 0, 0}}) {
        ParamValues aligned = fallback;
        aligned[f.param_index("ALIGNED")] = 1;
        SCOPED_TRACE(f.describe(aligned));
        EXPECT_EQ(f.required_alignment(aligned), 16);
        EXPECT_EQ(f.required_alignment(fallback), 4);
        const CompiledKernel with = compile_kernel(f, fallback, Arch{90}), without = compile_kernel(f, aligned, Arch{90});
        EXPECT_LT(without.cubin.size(), with.cubin.size());
        EXPECT_FALSE(without.ptxas.spills()) << without.log;
    }
}

// ALIGNED = 2: a staging kernel, the binary's second kernel of the same template arguments,
// runs first; it copies the operands that the loop copies 16 bytes at a time (B for NN, both
// for TN, B in the A place of NN's tiles of C^T, B kept as stored with KMAJOR, none for NT
// without it) and computes C's last N mod 4 columns, so the main kernel tiles N - N mod 4.
TEST(Warptile, StagedOperands) {
    const Family& f = warptile();
    const auto staged = [&](ParamValues v) {
        v[f.param_index("ALIGNED")] = 2;
        return v;
    };
    const auto with_layout = [&](ParamValues config, int ta, int tb) {
        config[f.param_index("TA")] = ta, config[f.param_index("TB")] = tb;
        return config;
    };
    const auto tiles_of_c_transposed = [&](ParamValues config) {
        config[f.param_index("CT")] = 1;
        return config;
    };
    const ParamValues v = staged(f.defaults);  // 256x128 tiles of C, NN
    EXPECT_TRUE(f.stages_operands(v));
    EXPECT_FALSE(f.stages_operands(f.defaults));
    EXPECT_EQ(f.required_alignment(v), 4);
    EXPECT_EQ(f.second_name_expression(v), "sgemm_warptile_stage<256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, false, 0, 2, 0, 0>");
    EXPECT_EQ(f.second_symbol(v, "_Z14sgemm_warptileILi1EEv9SgemmArgs"), "_Z20sgemm_warptile_stageILi1EEv9SgemmArgs");
    // 4095x4097x4093: 16 x 32 tiles of the first 4096 columns, not 17 x 32 (no tail either).
    EXPECT_EQ(f.geometry(v, 4095, 4097, 4093).grid.x, 512u);
    EXPECT_EQ(f.geometry(f.defaults, 4095, 4097, 4093).grid.x, 528u);
    EXPECT_EQ(f.geometry(v, 4095, 4096, 4093).grid.x, 512u);
    EXPECT_EQ(f.geometry(v, 7, 3, 5).grid.x, 0u);  // the staging kernel computes all 3 columns
    const LaunchGeometry stage = f.second_geometry(v, 4095, 4097, 4093, 132, 4);
    EXPECT_EQ(stage.grid.x, 264u);
    EXPECT_EQ(stage.grid.y, 2u);
    EXPECT_EQ(stage.block.x, static_cast<unsigned>(SGEMM_STAGE_THREADS));
    EXPECT_EQ(stage.dynamic_shared_bytes, static_cast<unsigned>(SGEMM_STAGE_SHARED_BYTES));
    EXPECT_EQ(f.second_geometry(v, 7, 3, 5, 132, 4).grid.x, 7u);  // no more blocks than rows to copy
    // A call of class 16 has nothing to copy: the staging kernel runs only for C's last
    // columns, and with N a multiple of 4 not at all; below class 16 it may have copies.
    EXPECT_TRUE(f.stages_call(v, 4097, 16));
    EXPECT_FALSE(f.stages_call(v, 4096, 16));
    EXPECT_TRUE(f.stages_call(v, 4096, 8));
    EXPECT_FALSE(f.stages_call(f.defaults, 4097, 4)) << "not a staging binary";
    EXPECT_EQ(f.second_geometry(v, 4095, 4097, 4093, 132, 16).grid.x, 128u) << "4095 rows of C, 32 a block";
    EXPECT_EQ(f.second_geometry(v, 4095, 4096, 4093, 132, 16).grid.x, 0u);
    EXPECT_EQ(f.second_geometry(v, 4095, 4096, 4093, 132, 8).grid.x, 264u);
    // The workspace: the counters, then B's 4093 rows of 4096 columns (A, stored as rows of
    // x, is copied 4 bytes at a time where it is); below class 16, since any row may then be
    // misaligned; none at class 16.
    const unsigned long long b_bytes = 4ull * 4093 * 4096;
    EXPECT_EQ(f.workspace_bytes(v, 4095, 4097, 4093, 132, 4), SGEMM_WORKSPACE_COUNTER_BYTES + b_bytes);
    EXPECT_EQ(f.workspace_bytes(v, 4095, 4097, 4093, 132, 8), SGEMM_WORKSPACE_COUNTER_BYTES + b_bytes);
    EXPECT_EQ(f.workspace_bytes(v, 4095, 4097, 4093, 132, 16), 0u);
    // TN: A (4093 rows of 4095, padded to 4096) and B.
    EXPECT_EQ(f.workspace_bytes(with_layout(v, 1, 0), 4095, 4097, 4093, 132, 4),
              SGEMM_WORKSPACE_COUNTER_BYTES + 4ull * 4093 * 4096 + b_bytes);
    // NT copies both operands 4 bytes at a time: nothing to stage but C's last columns.
    EXPECT_EQ(f.workspace_bytes(with_layout(v, 0, 1), 4095, 4097, 4093, 132, 4), SGEMM_WORKSPACE_COUNTER_BYTES);
    // With KMAJOR, NT's B is kept as stored, 16 bytes at a time: its first 4096 rows of 4093
    // (padded to 4096) are staged.
    const ParamValues kmajor = {64, 128, 32, 32, 64, 8, 8, 3, 0, 1, 2, 1, 0, 0, 2, 1, 0};
    EXPECT_EQ(f.invalid_reason(kmajor, Arch{90}), "");
    EXPECT_EQ(f.workspace_bytes(kmajor, 4095, 4097, 4093, 132, 4), SGEMM_WORKSPACE_COUNTER_BYTES + 4ull * 4096 * 4096);
    // NN's tiles of C^T hold B in the A place, as rows of k.
    EXPECT_EQ(f.workspace_bytes(tiles_of_c_transposed(v), 4095, 4097, 4093, 132, 4), SGEMM_WORKSPACE_COUNTER_BYTES + b_bytes);
    EXPECT_EQ(f.geometry(tiles_of_c_transposed(v), 4095, 4097, 4093).grid.x, 512u);
    // The workspace holds the staged copies: no split-K partials, no stream-K tail.
    ParamValues split = v, tail = v;
    split[f.param_index("SPLITS")] = 2;
    tail[f.param_index("SK")] = 1;
    EXPECT_NE(f.invalid_reason(split, Arch{90}).find("ALIGNED = 2"), std::string::npos);
    EXPECT_NE(f.invalid_reason(tail, Arch{90}).find("ALIGNED = 2"), std::string::npos);
    for (const ParamValues& config : {v, tiles_of_c_transposed(v), with_layout(v, 1, 1), kmajor})
        for (int sm : {80, 90}) sgemm::testing::expect_compiles_without_spills(f, config, Arch{sm});
    // The staging kernel's shared memory is dynamic: the binary's static share is the main
    // kernel's (none), which the cost model counts.
    EXPECT_EQ(compile_kernel(f, v, Arch{90}).ptxas.shared_bytes, 0);
}

// The winners the H200's tunes stored or came closest with (docs/RESULTS.md): 1024^3's
// 128x64 tile of C^T with two groups of warps along k, 4096^3's 256x128 tile of C^T with 4
// stages, and 8192^3's: the same tile with a stream-K tail (stored at 1.01x of cuBLAS since
// the code-cold timing) and, before, 256x64 tiles of BK 8 with the tail; the same 4096^3 and
// 8192^3 tiles for aligned operands only (ALIGNED = 1); and the winners stored since, all
// for aligned operands: 1024^3's 128x64 tile of C^T with 4 stages, and 4096^3's and 8192^3's
// 128x256 tiles of 8x16 (8192^3's with the stream-K tail, 254 registers on sm_90). Each
// compiles without spilling wherever it is valid; only the tails of tiles of C^T are not
// valid on sm_80 (they spilled there: ConstraintsSayWhy).
TEST(Warptile, TheMeasuredBestTilesCompileWithoutSpills) {
    const Family& f = warptile();
    const ParamValues best[] = {{128, 64, 16, 32, 64, 8, 8, 3, 0, 0, 2, 1, 1, 0, 0, 0, 0},
                                {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 0, 0, 0, 0},
                                {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 1, 0, 0, 0},
                                {256, 64, 8, 64, 64, 16, 8, 3, 0, 0, 1, 1, 1, 1, 0, 0, 0},
                                {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 0, 1, 0, 0},
                                {256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 1, 1, 0, 0},
                                {128, 64, 16, 64, 32, 8, 8, 4, 0, 0, 2, 1, 1, 0, 1, 0, 0},
                                {128, 256, 16, 64, 64, 8, 16, 3, 0, 0, 1, 1, 0, 0, 1, 0, 0},
                                {128, 256, 16, 64, 64, 8, 16, 4, 0, 0, 1, 1, 0, 1, 1, 0, 0}};
    for (const ParamValues& v : best) ASSERT_EQ(f.invalid_reason(v, Arch{90}), "") << f.describe(v);
    for (int sm : {80, 90})
        for (const ParamValues& v : best)
            if (f.invalid_reason(v, Arch{sm}).empty()) sgemm::testing::expect_compiles_without_spills(f, v, Arch{sm});
}

}  // namespace
