// The warptile family against cuBLAS: the odd-size list for every transpose (and NN as
// tiles of C^T) with alpha/beta and with beta = 0 over NaN, split-K with K not a multiple
// of the split (and slices left empty), 32-row decode tiles on decode shapes, groups of
// warps along k, the stream-K tail (SK = 1), rows of x kept as stored (KMAJOR), split-K
// summed by a second kernel (SUM_PASS = 1) with the in-kernel sum's bits and into a C that
// takes no 16-byte stores, split-K added into C by atomics (SUM_PASS = 2) with results that
// repeat within rounding, split-K added into C in turn (SUM_PASS = 3), padded and
// misaligned leading dimensions, binaries for aligned operands only, staged operands, and split-K and
// stream-K results that repeat bit for bit. Each configuration is compiled once for the
// whole binary (loaded_kernel).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "db/shape_key.h"
#include "tests/gpu/gpu_test_env.h"
#include "tuner/gemm_problem.h"

using namespace sgemm;
using sgemm::testing::loaded_kernel;

namespace {

struct WarptileCase {
    ParamValues config;  // BM BN BK WM WN TM TN STAGES TA TB WK SPLITS CT SK ALIGNED KMAJOR SUM_PASS
    int M, N, K;
    float alpha, beta;
};

void PrintTo(const WarptileCase& c, std::ostream* os) {
    *os << "warptile";
    for (int v : c.config) *os << "_" << v;
    *os << " " << c.M << "x" << c.N << "x" << c.K << " alpha=" << c.alpha << " beta=" << c.beta;
}

// The problem a configuration reads: its TA and TB are the stored layouts.
ProblemSpec spec_for(const ParamValues& config, int M, int N, int K, float alpha, float beta) {
    const Family& f = find_family("warptile");
    ProblemSpec spec;
    spec.M = M, spec.N = N, spec.K = K, spec.alpha = alpha, spec.beta = beta;
    spec.trans_a = f.value(config, "TA") != 0;
    spec.trans_b = f.value(config, "TB") != 0;
    spec.seed = 3 + M * 5 + N * 3 + K;
    return spec;
}

Accuracy run_once(sgemm::testing::GpuContext& gpu, GemmProblem& problem, const ParamValues& config) {
    const ProblemSpec& s = problem.spec();
    const LoadedKernel& kernel = loaded_kernel("warptile", config, gpu.device);
    problem.reserve_workspace(kernel.workspace_bytes(s.M, s.N, s.K, problem.call_alignment()));
    problem.poison_output(gpu.stream.get());
    kernel.launch(problem.args(), gpu.stream.get());
    return problem.check_output();
}

class WarptileAgainstCublas : public ::testing::TestWithParam<WarptileCase> {};

TEST_P(WarptileAgainstCublas, MatchesWithinTolerance) {
    SGEMM_REQUIRE_GPU(gpu);
    const WarptileCase& c = GetParam();
    GemmProblem problem(spec_for(c.config, c.M, c.N, c.K, c.alpha, c.beta), gpu->cublas, gpu->stream.get());
    const Accuracy a = run_once(*gpu, problem, c.config);
    EXPECT_TRUE(a.ok()) << a.verdict() << " (rel err norm " << a.rel_err_norm << ")";
}

ParamValues with_layout(ParamValues config, int ta, int tb) {
    config[8] = ta, config[9] = tb;
    return config;
}

const std::vector<std::tuple<int, int, int>> kOddShapes = {{1, 1, 1},       {7, 13, 5},         {17, 31, 7},
                                                          {128, 128, 128}, {1000, 3000, 2000}, {4095, 4097, 4093}};

// Each configuration on each shape, with alpha/beta and with beta = 0 over NaN (alpha -0.75
// there, so that a beta = 0 path that drops alpha shows).
std::vector<WarptileCase> every_config_on_every_shape(const std::vector<ParamValues>& configs,
                                                      const std::vector<std::tuple<int, int, int>>& shapes) {
    std::vector<WarptileCase> cases;
    for (const ParamValues& config : configs)
        for (const auto& [m, n, k] : shapes) {
            cases.push_back({config, m, n, k, 1.5f, 0.5f});
            cases.push_back({config, m, n, k, -0.75f, 0.0f});
        }
    return cases;
}

// NN's tiles of C^T (CT = 1): B in the tile's A place, A in B's, C stored transposed.
ParamValues tiles_of_c_transposed(ParamValues config) {
    config[12] = 1;
    return config;
}

// The same tiles with a stream-K tail (SK = 1).
ParamValues stream_k(ParamValues config) {
    config[13] = 1;
    return config;
}

// The same tiles for operands that take 16-byte accesses only (ALIGNED = 1), or with the
// operands that do not take them staged by a second kernel (ALIGNED = 2).
ParamValues aligned_as(ParamValues config, int aligned) {
    config[14] = aligned;
    return config;
}

// A row of `floats` padded to the next multiple of 4 floats (16 bytes).
int padded_to_16_bytes(int floats) { return (floats + 3) / 4 * 4; }

// The same split tiles summing their slices in a second kernel (SUM_PASS = 1), or adding
// them into C with atomics (SUM_PASS = 2) or in turn (SUM_PASS = 3).
ParamValues summed_by(ParamValues config, int how) {
    config[16] = how;
    return config;
}
ParamValues sum_pass(ParamValues config) { return summed_by(config, SGEMM_SUM_BY_PASS); }
ParamValues atomic_sums(ParamValues config) { return summed_by(config, SGEMM_SUM_BY_ATOMICS); }
ParamValues sums_by_turns(ParamValues config) { return summed_by(config, SGEMM_SUM_IN_ORDER); }

// The default tile in every layout, and as tiles of C^T for NN, on the odd-size list.
std::vector<WarptileCase> layout_cases() {
    std::vector<ParamValues> configs;
    for (int ta : {0, 1})
        for (int tb : {0, 1}) configs.push_back(with_layout(find_family("warptile").defaults, ta, tb));
    configs.push_back(tiles_of_c_transposed(find_family("warptile").defaults));
    return every_config_on_every_shape(configs, kOddShapes);
}

// Split-K: K is no multiple of the split (or of BK), late slices of a short K get no k
// tiles at all, and 2500 rows make bands of tile rows that the swizzle leaves partial.
const std::vector<ParamValues> kSplitConfigs = {{128, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 4, 0, 0, 0, 0, 0},
                                              {64, 128, 16, 64, 64, 8, 16, 2, 0, 1, 1, 8, 0, 0, 0, 0, 0},
                                              {128, 64, 16, 64, 64, 16, 8, 4, 1, 0, 1, 2, 0, 0, 0, 0, 0},
                                              {256, 128, 16, 64, 64, 16, 8, 3, 1, 1, 1, 4, 0, 0, 0, 0, 0},
                                              {64, 64, 16, 32, 32, 8, 4, 3, 0, 1, 1, 2, 0, 0, 0, 0, 0},
                                              {128, 64, 8, 64, 32, 8, 8, 4, 1, 0, 1, 3, 0, 0, 0, 0, 0},
                                              {256, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, 4, 1, 0, 0, 0, 0},
                                              {64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 3, 1, 0, 0, 0, 0}};
const std::vector<std::tuple<int, int, int>> kSplitShapes = {{7, 13, 5}, {17, 31, 7}, {128, 128, 128},
                                                             {1024, 1024, 1023}, {2500, 300, 77}};

std::vector<WarptileCase> split_cases() { return every_config_on_every_shape(kSplitConfigs, kSplitShapes); }

// The split tiles above summed by the pass, by atomics or by turns on C (`how`), on the same
// shapes (C of 7x13 and 17x31 has rows no multiple of 4, so groups of 4 elements of the sum
// straddle rows; 1024x1024x1023 in 64x128 tiles of 8 slices, 1024 blocks, or 128x128 of 4
// makes more blocks than fit the GPU at once, so later slices wait on blocks of earlier
// slices that ran in earlier waves), and 32-row decode tiles, with groups of warps or with 12 and 16 slices (16 is the
// pass's most), on decode shapes with K no multiple of the split.
std::vector<WarptileCase> summed_cases(int how) {
    const std::vector<ParamValues> decode_tiles = {{32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 0, 0, 0},
                                                   {32, 128, 8, 32, 64, 8, 8, 4, 1, 0, 1, 6, 0, 0, 0, 0, 0},
                                                   {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 16, 0, 0, 0, 0, 0},
                                                   {32, 128, 16, 32, 32, 8, 4, 3, 0, 1, 1, 12, 0, 0, 0, 0, 0}};
    std::vector<ParamValues> split, decode;
    for (const ParamValues& config : kSplitConfigs) split.push_back(summed_by(config, how));
    for (const ParamValues& config : decode_tiles) decode.push_back(summed_by(config, how));
    std::vector<WarptileCase> cases = every_config_on_every_shape(split, kSplitShapes);
    for (const WarptileCase& c : every_config_on_every_shape(decode, {{32, 6144, 4093}, {1, 4097, 1000}, {33, 300, 77}}))
        cases.push_back(c);
    return cases;
}

// 32-row tiles, the batch-32 decode tiles: one warp row, in every layout, on decode shapes
// whose K is no multiple of the split (4093 over 3 or 6 slices) and on M of 1, 17 and 33.
std::vector<WarptileCase> decode_tile_cases() {
    const std::vector<ParamValues> configs = {{32, 256, 16, 32, 64, 8, 8, 4, 0, 0, 1, 3, 0, 0, 0, 0, 0},
                                              {32, 128, 8, 32, 64, 8, 8, 3, 1, 0, 1, 6, 0, 0, 0, 0, 0},
                                              {32, 64, 16, 32, 64, 8, 8, 2, 0, 1, 1, 1, 0, 0, 0, 0, 0},
                                              {32, 128, 16, 32, 64, 8, 8, 4, 1, 1, 1, 2, 0, 0, 0, 0, 0},
                                              {32, 64, 16, 32, 32, 8, 4, 4, 0, 0, 1, 4, 0, 0, 0, 0, 0},
                                              {32, 128, 8, 32, 32, 8, 4, 4, 1, 1, 1, 6, 0, 0, 0, 0, 0}};
    const std::vector<std::tuple<int, int, int>> shapes = {{32, 6144, 4093}, {1, 4097, 1000}, {17, 1000, 4095},
                                                           {33, 300, 77}};
    return every_config_on_every_shape(configs, shapes);
}

// Groups of warps sharing each k tile (down to 4 k per group), with and without split-K,
// in four layouts, on odd sizes and decode shapes: blocks of 1, 2 and 4 warps a group,
// thread tiles of 8x4, 8x8 and 16x8, and shared memory sized by the stages or, in the
// last two, by the partial tile (64x64: 16384 bytes against 12672 for three stages of 8 k;
// 64x128: 32768 against 25088 for two of 16).
std::vector<WarptileCase> warp_group_cases() {
    const std::vector<ParamValues> configs = {{32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 0, 0, 0},
                                              {32, 64, 8, 32, 32, 8, 4, 4, 1, 1, 2, 3, 0, 0, 0, 0, 0},
                                              {64, 128, 16, 32, 64, 8, 8, 3, 0, 1, 2, 1, 0, 0, 0, 0, 0},
                                              {32, 128, 16, 32, 64, 8, 8, 2, 1, 0, 2, 1, 0, 0, 0, 0, 0},
                                              {64, 64, 16, 64, 64, 16, 8, 2, 1, 1, 2, 1, 0, 0, 0, 0, 0},
                                              {64, 64, 8, 32, 32, 8, 4, 3, 0, 0, 2, 3, 0, 0, 0, 0, 0},
                                              {64, 128, 16, 32, 64, 8, 8, 2, 0, 0, 2, 2, 0, 0, 0, 0, 0},
                                              {64, 128, 16, 32, 64, 8, 8, 2, 0, 0, 2, 2, 1, 0, 0, 0, 0}};
    const std::vector<std::tuple<int, int, int>> shapes = {{1, 1, 1},       {7, 13, 5},         {17, 31, 7},
                                                           {128, 128, 128}, {1000, 3000, 2000}, {32, 6144, 4093},
                                                           {33, 300, 77}};
    return every_config_on_every_shape(configs, shapes);
}

// NN as tiles of C^T in other tile shapes: 8 x 4 lane grids (8x16 and 8x4 thread tiles,
// strips of 32 rows), 4 and 16 wide thread tiles, BK = 8, a 32-row tile, and groups of warps
// with and without split-K, on the odd-size list.
std::vector<WarptileCase> c_transposed_cases() {
    const std::vector<ParamValues> configs = {{128, 256, 16, 64, 64, 8, 16, 3, 0, 0, 1, 1, 1, 0, 0, 0, 0},
                                              {64, 64, 8, 32, 32, 8, 4, 4, 0, 0, 1, 2, 1, 0, 0, 0, 0},
                                              {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 1, 1, 0, 0, 0, 0},
                                              {64, 128, 8, 64, 64, 8, 16, 4, 0, 0, 2, 3, 1, 0, 0, 0, 0}};
    return every_config_on_every_shape(configs, kOddShapes);
}

// A stream-K tail (SK = 1) in every layout and as tiles of C^T, in three tile sizes. With the
// H200's 132 SMs, 1000x3000x2000 in 256x128 tiles (96 tiles) and 2048x2048x1021 (128) go
// to the tail alone, whose runs then end inside tiles; 3000x3000x1000 (288 tiles) leaves
// 24 tiles to it after two whole waves; and 4095x4097x4093 in tiles of C^T (544) leaves 16,
// each shared by about 8 blocks. The 128x128 and 64x64 tiles make more tiles of each shape.
std::vector<WarptileCase> stream_k_cases() {
    std::vector<ParamValues> configs;
    const ParamValues tail = stream_k(find_family("warptile").defaults);
    for (int ta : {0, 1})
        for (int tb : {0, 1}) configs.push_back(with_layout(tail, ta, tb));
    configs.push_back(tiles_of_c_transposed(tail));
    configs.push_back({128, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 1, 0, 1, 0, 0, 0});
    configs.push_back({64, 64, 16, 32, 32, 8, 4, 3, 0, 1, 1, 1, 0, 1, 0, 0, 0});
    std::vector<std::tuple<int, int, int>> shapes = kOddShapes;
    shapes.insert(shapes.end(), {{3000, 3000, 1000}, {2048, 2048, 1021}});
    return every_config_on_every_shape(configs, shapes);
}

// Rows of x kept as stored in B's place (KMAJOR, with BK 32): NT in 32-row decode tiles with
// groups of warps and split-K, in 8x4 thread tiles with and without slices, TT, NN as tiles
// of C^T (A in B's place), and a stream-K tail, on the odd-size list and on decode shapes
// with K not a multiple of the split.
std::vector<WarptileCase> k_major_cases() {
    const std::vector<ParamValues> configs = {{32, 128, 32, 32, 64, 8, 8, 3, 0, 1, 2, 8, 0, 0, 0, 1, 0},
                                              {32, 128, 32, 32, 32, 8, 4, 3, 0, 1, 1, 4, 0, 0, 0, 1, 0},
                                              {64, 64, 32, 32, 32, 8, 4, 2, 0, 1, 1, 1, 0, 0, 0, 1, 0},
                                              {64, 128, 32, 32, 64, 8, 8, 3, 1, 1, 1, 3, 0, 0, 0, 1, 0},
                                              {128, 64, 32, 64, 32, 8, 8, 3, 0, 0, 1, 1, 1, 0, 0, 1, 0},
                                              {64, 128, 32, 32, 64, 8, 8, 3, 0, 1, 1, 1, 0, 1, 0, 1, 0}};
    std::vector<std::tuple<int, int, int>> shapes = kOddShapes;
    shapes.insert(shapes.end(), {{32, 6144, 4093}, {33, 1000, 517}});
    return every_config_on_every_shape(configs, shapes);
}

INSTANTIATE_TEST_SUITE_P(EveryLayoutOnOddShapes, WarptileAgainstCublas, ::testing::ValuesIn(layout_cases()));
INSTANTIATE_TEST_SUITE_P(SplitK, WarptileAgainstCublas, ::testing::ValuesIn(split_cases()));
INSTANTIATE_TEST_SUITE_P(SumPass, WarptileAgainstCublas, ::testing::ValuesIn(summed_cases(SGEMM_SUM_BY_PASS)));
INSTANTIATE_TEST_SUITE_P(AtomicSums, WarptileAgainstCublas, ::testing::ValuesIn(summed_cases(SGEMM_SUM_BY_ATOMICS)));
INSTANTIATE_TEST_SUITE_P(TurnsOnC, WarptileAgainstCublas, ::testing::ValuesIn(summed_cases(SGEMM_SUM_IN_ORDER)));
INSTANTIATE_TEST_SUITE_P(TilesOfCTransposed, WarptileAgainstCublas, ::testing::ValuesIn(c_transposed_cases()));
INSTANTIATE_TEST_SUITE_P(DecodeTiles, WarptileAgainstCublas, ::testing::ValuesIn(decode_tile_cases()));
INSTANTIATE_TEST_SUITE_P(GroupsOfWarpsAlongK, WarptileAgainstCublas, ::testing::ValuesIn(warp_group_cases()));
INSTANTIATE_TEST_SUITE_P(StreamKTail, WarptileAgainstCublas, ::testing::ValuesIn(stream_k_cases()));
INSTANTIATE_TEST_SUITE_P(KMajorRowsOfX, WarptileAgainstCublas, ::testing::ValuesIn(k_major_cases()));

// Leading dimensions longer than the rows and not multiples of 4: the 16-byte copies are
// illegal, so the copies of untransposed rows fall back to 4 bytes each.
TEST(WarptilePadding, PaddedAndMisalignedLeadingDimensions) {
    SGEMM_REQUIRE_GPU(gpu);
    for (const ParamValues& base : {find_family("warptile").defaults, ParamValues{128, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 4, 0, 0, 0, 0, 0},
                                    tiles_of_c_transposed(find_family("warptile").defaults),
                                    ParamValues{128, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 4, 1, 0, 0, 0, 0},
                                    ParamValues{128, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 1, 0, 1, 0, 0, 0},
                                    ParamValues{64, 128, 32, 32, 64, 8, 8, 3, 0, 1, 2, 2, 0, 0, 0, 1, 0}})
        for (int ta : {0, 1})
            for (int tb : {0, 1}) {
                if (base[12] && (ta || tb)) continue;  // tiles of C^T are for NN only
                if (base[15] && !tb) continue;         // KMAJOR keeps B stored N x K
                const ParamValues config = with_layout(base, ta, tb);
                ProblemSpec spec = spec_for(config, 267, 330, 145, -0.75f, 2.0f);
                spec.lda = (ta ? spec.M : spec.K) + 2;
                spec.ldb = (tb ? spec.K : spec.N) + 5;
                spec.ldc = spec.N + 1;
                GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
                const Accuracy a = run_once(*gpu, problem, config);
                EXPECT_TRUE(a.ok()) << "TA=" << ta << " TB=" << tb << " SPLITS=" << config[11] << " CT=" << config[12]
                                    << " SK=" << config[13] << ": "
                                    << a.verdict();
            }
}

// Binaries for aligned operands only (ALIGNED = 1) have no 4-byte fallback: they serve calls
// whose pointers and leading dimensions all take 16-byte accesses. Every layout, tiles of C^T,
// split-K (summed in the kernel and by the sum pass), groups of warps along k and the
// stream-K tail, on the odd sizes with each leading
// dimension padded to a multiple of 4 floats (alpha/beta, and beta = 0 over NaN).
TEST(WarptileAlignedOperands, OddShapesWithLeadingDimensionsPaddedToFourFloats) {
    SGEMM_REQUIRE_GPU(gpu);
    const Family& f = find_family("warptile");
    std::vector<ParamValues> configs;
    for (int ta : {0, 1})
        for (int tb : {0, 1}) configs.push_back(aligned_as(with_layout(f.defaults, ta, tb), 1));
    configs.push_back(aligned_as(tiles_of_c_transposed(f.defaults), 1));
    configs.push_back(aligned_as(stream_k(tiles_of_c_transposed(f.defaults)), 1));
    configs.push_back({128, 128, 8, 32, 64, 8, 8, 3, 0, 1, 1, 4, 0, 0, 1, 0, 0});
    configs.push_back({32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 1, 0, 0});
    configs.push_back({32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 1, 0, 1});
    configs.push_back({32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 1, 0, 2});
    configs.push_back({64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 3, 1, 0, 1, 0, 2});
    configs.push_back({32, 128, 32, 32, 64, 8, 8, 3, 0, 1, 2, 8, 0, 0, 1, 1, 0});
    configs.push_back({128, 64, 32, 64, 32, 8, 8, 3, 0, 0, 1, 1, 1, 0, 1, 1, 0});
    for (const ParamValues& config : configs)
        for (const auto& [m, n, k] : kOddShapes)
            for (const auto& [alpha, beta] : {std::pair{1.5f, 0.5f}, std::pair{-0.75f, 0.0f}}) {
                ProblemSpec spec = spec_for(config, m, n, k, alpha, beta);
                spec.lda = padded_to_16_bytes(spec.trans_a ? m : k);
                spec.ldb = padded_to_16_bytes(spec.trans_b ? k : n);
                spec.ldc = padded_to_16_bytes(n);
                GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
                const SgemmArgs args = problem.args();
                ASSERT_EQ(alignment_class(args.A, args.lda, args.B, args.ldb, args.C, args.ldc), 16);
                const Accuracy a = run_once(*gpu, problem, config);
                EXPECT_TRUE(a.ok()) << f.describe(config) << " " << m << "x" << n << "x" << k << " beta=" << beta
                                    << ": " << a.verdict();
            }
}

// Staged operands (ALIGNED = 2): the staging kernel copies the operands the loop reads 16
// bytes at a time where their rows do not take such copies, and computes C's last N mod 4
// columns. Every layout, NN's tiles of C^T (also with KMAJOR, which stages A and B), KMAJOR
// with groups of warps along k; on the odd sizes plus N of 2, 3, 5 and 6 (below 4 the main
// kernel has no columns), with tight, padded-but-misaligned, aligned and offset operands;
// alpha/beta and beta = 0 over NaN. A loop that read an unstaged misaligned operand 16 bytes
// at a time would fault.
TEST(WarptileStagedOperands, MatchCublasInEveryLayoutAtEveryAlignment) {
    SGEMM_REQUIRE_GPU(gpu);
    const Family& f = find_family("warptile");
    std::vector<ParamValues> configs;
    for (int ta : {0, 1})
        for (int tb : {0, 1}) configs.push_back(aligned_as(with_layout(f.defaults, ta, tb), 2));
    configs.push_back({256, 128, 16, 64, 64, 16, 8, 4, 0, 0, 1, 1, 1, 0, 2, 0, 0});
    configs.push_back({64, 128, 32, 32, 64, 8, 8, 3, 0, 1, 2, 1, 0, 0, 2, 1, 0});
    configs.push_back({128, 64, 32, 64, 32, 8, 8, 3, 0, 0, 1, 1, 1, 0, 2, 1, 0});  // C^T: A and B both staged
    std::vector<std::tuple<int, int, int>> shapes = kOddShapes;
    shapes.insert(shapes.end(), {{9, 2, 33}, {300, 3, 1000}, {65, 5, 17}, {130, 6, 260}});
    enum class Layout { tight, padded, aligned, offset };
    for (const ParamValues& config : configs)
        for (const auto& [m, n, k] : shapes)
            for (Layout layout : {Layout::tight, Layout::padded, Layout::aligned, Layout::offset}) {
                if (m * 1ll * n > 1000000 && layout != Layout::tight) continue;  // the largest once
                for (const auto& [alpha, beta] : {std::pair{1.5f, 0.5f}, std::pair{-0.75f, 0.0f}}) {
                    ProblemSpec spec = spec_for(config, m, n, k, alpha, beta);
                    const int a_row = spec.trans_a ? m : k, b_row = spec.trans_b ? k : n;
                    if (layout == Layout::padded) spec.lda = a_row + 3, spec.ldb = b_row + 5, spec.ldc = n + 1;
                    if (layout == Layout::aligned || layout == Layout::offset)
                        spec.lda = padded_to_16_bytes(a_row), spec.ldb = padded_to_16_bytes(b_row),
                        spec.ldc = padded_to_16_bytes(n);
                    if (layout == Layout::offset) spec.offset_floats = 1;
                    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
                    const Accuracy a = run_once(*gpu, problem, config);
                    EXPECT_TRUE(a.ok()) << f.describe(config) << " " << m << "x" << n << "x" << k << " layout "
                                        << static_cast<int>(layout) << " beta=" << beta << ": " << a.verdict();
                }
            }
}

// A binary that splits k serves every split count above 1 (dispatch re-splits a winner so),
// and no other configuration: one slice, or no fallback for misaligned operands, is another
// binary, and preparing it is an error.
TEST(WarptileBinary, ServesTheSplitCountsOnItsSideOfOne) {
    SGEMM_REQUIRE_GPU(gpu);
    const ParamValues four = {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 4, 0, 0, 0, 0, 0};
    const LoadedKernel& kernel = loaded_kernel("warptile", four, gpu->device);
    ParamValues two = four, one = four, aligned = four;
    two[11] = 2, one[11] = 1, aligned[14] = 1;
    EXPECT_TRUE(kernel.serves(two));
    EXPECT_FALSE(kernel.serves(one));
    EXPECT_FALSE(kernel.serves(aligned));
    EXPECT_FALSE(kernel.serves(sum_pass(four)));
    const KernelLaunch launch = kernel.prepare(32, 4096, 4096, 16, two);
    EXPECT_EQ(launch.geometry.grid.y, 2u);
    EXPECT_EQ(launch.workspace_bytes, sgemm_splitk_workspace_bytes(2, 32, 4096));
    EXPECT_EQ(launch.second, nullptr);
    EXPECT_THROW(kernel.prepare(32, 4096, 4096, 16, one), Error);
    // The sum pass's binary re-split: its second kernel gets a row of threads per slice.
    const LoadedKernel& summing = loaded_kernel("warptile", sum_pass(four), gpu->device);
    EXPECT_TRUE(summing.serves(sum_pass(two)));
    const KernelLaunch summed = summing.prepare(32, 4096, 4096, 16, sum_pass(two));
    EXPECT_NE(summed.second, nullptr);
    EXPECT_EQ(summed.second_geometry.block.y, 2u);
    EXPECT_EQ(summed.second_overlaps_main, gpu->device.cc_major >= 9 && gpu->device.runtime_version >= 12030);
    // The atomics' binary re-split: no second kernel, and a workspace of the counters alone.
    const LoadedKernel& adding = loaded_kernel("warptile", atomic_sums(four), gpu->device);
    EXPECT_TRUE(adding.serves(atomic_sums(two)));
    EXPECT_FALSE(adding.serves(two));
    const KernelLaunch added = adding.prepare(32, 4096, 4096, 16, atomic_sums(two));
    EXPECT_EQ(added.second, nullptr);
    EXPECT_EQ(added.workspace_bytes, SGEMM_WORKSPACE_COUNTER_BYTES);
}

// Split-K sums the slices in a fixed order, groups of warps their partial tiles, and the
// stream-K tail the parts of a tile (64 tiles of 128x128, all in the tail): the same inputs
// give the same bits, launch after launch, and the tile counters are left ready for the
// next launch.
TEST(WarptileSplitK, RepeatsBitForBit) {
    SGEMM_REQUIRE_GPU(gpu);
    for (const ParamValues& config : {ParamValues{128, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 8, 0, 0, 0, 0, 0},
                                      ParamValues{32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 6, 0, 0, 0, 0, 0},
                                      ParamValues{128, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 8, 1, 0, 0, 0, 0},
                                      ParamValues{128, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 1, 0, 1, 0, 0, 0},
                                      ParamValues{32, 128, 32, 32, 64, 8, 8, 3, 0, 1, 2, 8, 0, 0, 0, 1, 0},
                                      ParamValues{32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 6, 0, 0, 0, 0, 1}}) {
        GemmProblem problem(spec_for(config, 1024, 1024, 1021, 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
        std::vector<float> first;
        for (int run = 0; run < 4; ++run) {
            ASSERT_TRUE(run_once(*gpu, problem, config).ok()) << "run " << run;
            const std::vector<float> out = problem.download_output();
            if (run == 0)
                first = out;
            else
                EXPECT_EQ(out, first) << find_family("warptile").describe(config) << ": run " << run
                                      << " differs from run 0";
        }
    }
}

// Slices added into C by atomics add in whatever order the blocks reach their adds, so C may
// differ from run to run, but only by rounding: each run passes the check against cuBLAS,
// and every run stays within 2 * slices unit roundoffs (2^-24) of run 0's largest element
// (each add's rounding is at most half an ulp of a running sum, and these sums stay under
// C's largest elements times a small factor on such random data). A slice added twice or not
// at all, or beta * C added by a slice other than the first, is orders of magnitude more.
// Tiles of C, of C^T, with groups of warps, more blocks than fit the GPU at once, and alpha
// and beta both ways; the check also holds each run's tile counters back to zero. (Slice 0
// prepares its tile before its loop, so the other slices seldom have to wait for it here:
// TheAtomicSumsWaitForTheFirstSlice makes them.)
TEST(WarptileSplitK, TheAtomicSumsRepeatWithinRounding) {
    SGEMM_REQUIRE_GPU(gpu);
    const Family& f = find_family("warptile");
    for (const ParamValues& config : {atomic_sums(ParamValues{128, 128, 8, 32, 64, 8, 8, 3, 0, 0, 1, 8, 0, 0, 0, 0, 0}),
                                      atomic_sums(ParamValues{32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 6, 0, 0, 0, 0, 0}),
                                      atomic_sums(ParamValues{64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 16, 1, 0, 0, 0, 0})})
        for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{-0.75f, 0.5f}}) {
            GemmProblem problem(spec_for(config, 1024, 1024, 1021, alpha, beta), gpu->cublas, gpu->stream.get());
            std::vector<float> first;
            float largest = 0.0f;
            for (int run = 0; run < 4; ++run) {
                const Accuracy a = run_once(*gpu, problem, config);
                ASSERT_TRUE(a.ok()) << f.describe(config) << ", run " << run << ": " << a.verdict();
                const std::vector<float> out = problem.download_output();
                if (run == 0) {
                    first = out;
                    for (float x : out) largest = std::max(largest, std::fabs(x));
                    continue;
                }
                const float allowed = 2.0f * config[11] * std::ldexp(1.0f, -24) * largest;
                float worst = 0.0f;
                for (std::size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::fabs(out[i] - first[i]));
                EXPECT_LE(worst, allowed) << f.describe(config) << " beta " << beta << ": run " << run
                                          << " differs from run 0 by " << worst;
            }
        }
}

// Runs each configuration in a build whose slice-0 blocks sleep 100 us before they first
// write their tile of C (KernelBuild::late_first_slice), twice, on 100x1000x1021 with alpha
// and beta both ways, each run checked against cuBLAS. One wave of blocks (32 tiles of C,
// or 16 of C^T, times the slices), so every block waited for is running.
void expect_right_with_a_late_first_slice(sgemm::testing::GpuContext& gpu, const std::vector<ParamValues>& configs) {
    const Family& f = find_family("warptile");
    for (const ParamValues& config : configs) {
        const LoadedKernel late(f, compile_kernel(f, config, Arch{gpu.device.sm()}, KernelBuild::late_first_slice));
        for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{-0.75f, 0.5f}}) {
            GemmProblem problem(spec_for(config, 100, 1000, 1021, alpha, beta), gpu.cublas, gpu.stream.get());
            problem.reserve_workspace(late.workspace_bytes(100, 1000, 1021, problem.call_alignment()));
            for (int run = 0; run < 2; ++run) {
                problem.poison_output(gpu.stream.get());
                late.launch(problem.args(), gpu.stream.get());
                const Accuracy a = problem.check_output();
                EXPECT_TRUE(a.ok()) << f.describe(config) << " beta " << beta << ", run " << run << ": " << a.verdict();
            }
        }
    }
}

// Slice 0 prepares its tile of C late: every other slice is through its k by then and must
// wait for the prepared tile, or its adds land first and slice 0 overwrites them with beta *
// C (zeros for beta = 0), and C misses those slices.
TEST(WarptileSplitK, TheAtomicSumsWaitForTheFirstSlice) {
    SGEMM_REQUIRE_GPU(gpu);
    expect_right_with_a_late_first_slice(*gpu, {atomic_sums(ParamValues{32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 6, 0, 0, 0, 0, 0}),
                                                atomic_sums(ParamValues{64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 4, 1, 0, 0, 0, 0})});
}

// Slices that take turns on C add in slice order whatever the timing: the same bits run after
// run, where a tile's slices run side by side (32x6144x4093 in 16 slices, one round of
// blocks) and where they run in different rounds (1024x1024x1021 in 64x128 tiles of 8
// slices, 1024 blocks), as tiles of C and of C^T, with alpha and beta both ways; the check
// also holds each run's tile counters back to zero.
TEST(WarptileSplitK, TheTurnsOnCRepeatBitForBit) {
    SGEMM_REQUIRE_GPU(gpu);
    const Family& f = find_family("warptile");
    for (const auto& [config, m, n, k] :
         {std::tuple{sums_by_turns(ParamValues{32, 256, 16, 32, 64, 8, 8, 2, 0, 0, 1, 16, 0, 0, 0, 0, 0}), 32, 6144, 4093},
          std::tuple{sums_by_turns(ParamValues{64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 8, 0, 0, 0, 0, 0}), 1024, 1024, 1021},
          std::tuple{sums_by_turns(ParamValues{64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 8, 1, 0, 0, 0, 0}), 1024, 1024, 1021}})
        for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{-0.75f, 0.5f}}) {
            GemmProblem problem(spec_for(config, m, n, k, alpha, beta), gpu->cublas, gpu->stream.get());
            std::vector<float> first;
            for (int run = 0; run < 4; ++run) {
                const Accuracy a = run_once(*gpu, problem, config);
                ASSERT_TRUE(a.ok()) << f.describe(config) << ", run " << run << ": " << a.verdict();
                if (run == 0)
                    first = problem.download_output();
                else
                    EXPECT_EQ(problem.download_output(), first) << f.describe(config) << " beta " << beta << ": run " << run;
            }
        }
}

// Slice 0 takes its turn late: every other slice is through its k by then and must wait its
// turn, or it adds into a C that slice 0 then overwrites with alpha * p0 + beta * C, and C
// misses those slices.
TEST(WarptileSplitK, TheTurnsOnCWaitForTheFirstSlice) {
    SGEMM_REQUIRE_GPU(gpu);
    expect_right_with_a_late_first_slice(*gpu, {sums_by_turns(ParamValues{32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 6, 0, 0, 0, 0, 0}),
                                                sums_by_turns(ParamValues{64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 4, 1, 0, 0, 0, 0})});
}

// The sum pass adds the slices in the order the in-kernel finish does, from the same +0.0f,
// and scales by alpha the same way: the two give the same bits, with C's rows a multiple of
// 4 floats and not (groups of 4 then straddle rows), and with C's leading dimension padded.
TEST(WarptileSplitK, TheSumPassGivesTheInKernelSumsBits) {
    SGEMM_REQUIRE_GPU(gpu);
    const ParamValues in_kernel{32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 6, 0, 0, 0, 0, 0};
    for (const auto& [m, n, k, ldc] : {std::tuple{32, 4096, 4093, 0}, std::tuple{33, 1001, 777, 0},
                                       std::tuple{17, 131, 300, 136}}) {
        ProblemSpec spec = spec_for(in_kernel, m, n, k, -0.75f, 0.0f);
        spec.ldc = ldc;
        GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
        ASSERT_TRUE(run_once(*gpu, problem, in_kernel).ok());
        const std::vector<float> expected = problem.download_output();
        ASSERT_TRUE(run_once(*gpu, problem, sum_pass(in_kernel)).ok());
        EXPECT_EQ(problem.download_output(), expected) << m << "x" << n << "x" << k;
    }
}

// A C that takes no 16-byte stores while N is a multiple of 4, so that the partials do: its
// rows padded to N + 1 floats, or its start one float off 16-byte alignment (A and B too). The
// pass must store C a float at a time, and the atomics and the turns add into it a float at
// a time; a 16-byte access there is a misaligned-address fault.
TEST(WarptileSplitK, TheSumPassAtomicsAndTurnsWriteACThatTakesNo16ByteAccesses) {
    SGEMM_REQUIRE_GPU(gpu);
    const ParamValues decode_tile{32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 0, 0, 0};
    for (const ParamValues& config : {sum_pass(kSplitConfigs[0]), sum_pass(decode_tile), atomic_sums(kSplitConfigs[0]),
                                      atomic_sums(decode_tile), atomic_sums(kSplitConfigs[6]), sums_by_turns(decode_tile),
                                      sums_by_turns(kSplitConfigs[6])})
        for (bool padded_rows : {true, false})
            for (float beta : {0.5f, 0.0f}) {
                ProblemSpec spec = spec_for(config, 33, 4096, 1000, -0.75f, beta);
                if (padded_rows)
                    spec.ldc = spec.N + 1;
                else
                    spec.offset_floats = 1;
                GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
                const Accuracy a = run_once(*gpu, problem, config);
                EXPECT_TRUE(a.ok()) << find_family("warptile").describe(config) << (padded_rows ? ", ldc N + 1" : ", offset")
                                    << ", beta " << beta << ": " << a.verdict();
            }
}

// The check holds a kernel to the workspace it declares, from which dispatch sizes its own:
// the same split-K kernel fails when the problem declares 4 bytes less than it writes (its
// last partial lands in the guard), and a tile counter left non-zero fails the run.
TEST(WarptileSplitK, TheCheckCatchesAWriteBeyondTheDeclaredWorkspaceAndACounterLeftSet) {
    SGEMM_REQUIRE_GPU(gpu);
    const ParamValues config{64, 64, 16, 32, 32, 8, 4, 3, 0, 0, 1, 2, 0, 0, 0, 0, 0};
    GemmProblem problem(spec_for(config, 100, 70, 300, 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    const LoadedKernel& kernel = loaded_kernel("warptile", config, gpu->device);
    const std::size_t declared = kernel.workspace_bytes(100, 70, 300, problem.call_alignment());
    ASSERT_TRUE(run_once(*gpu, problem, config).ok());

    problem.reserve_workspace(declared - 4);
    problem.poison_output(gpu->stream.get());
    kernel.launch(problem.args(), gpu->stream.get());
    Accuracy a = problem.check_output();
    EXPECT_EQ(a.workspace_overrun, 1u);
    EXPECT_EQ(a.verdict(), "wrote past the " + std::to_string(declared - 4) +
                               " bytes of workspace it declares: 1 word of the guard after them changed");

    problem.reserve_workspace(declared);
    problem.poison_output(gpu->stream.get());
    kernel.launch(problem.args(), gpu->stream.get());
    SGEMM_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(problem.args().workspace) + 8, 1, 1, gpu->stream.get()));
    a = problem.check_output();
    EXPECT_EQ(a.counters_left, 1u);
    EXPECT_EQ(a.verdict(), "left 1 tile counter of the workspace non-zero");
}

}  // namespace
