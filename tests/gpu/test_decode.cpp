// The decode family against cuBLAS: odd sizes, decode shapes whose K is not a multiple of
// the split, alpha/beta and beta = 0 over NaN (alpha -0.75 there), several row tiles, B
// stored K x N (NN) and N x K (NT, TB = 1), each also through a ring in shared memory (RING),
// split-K summed by a second kernel (SUM_PASS) with the in-kernel sum's bits and into a C
// that takes no 16-byte stores, and split-K results that repeat bit for bit from run to run.
#include <gtest/gtest.h>

#include "tests/gpu/gpu_test_env.h"
#include "tuner/gemm_problem.h"

using namespace sgemm;
using sgemm::testing::loaded_kernel;

namespace {

struct DecodeCase {
    ParamValues config;  // MT, BN, KW, UNROLL, EF, TB, SPLITS, RING, SUM_PASS
    int M, N, K;
    float alpha, beta;
    int lda = 0;  // 0: K, tight
    int ldb = 0;  // 0: tight, N or (TB) K
};

void PrintTo(const DecodeCase& c, std::ostream* os) {
    *os << "decode";
    for (int v : c.config) *os << "_" << v;
    *os << " " << c.M << "x" << c.N << "x" << c.K << " alpha=" << c.alpha << " beta=" << c.beta;
    if (c.lda) *os << " lda=" << c.lda;
    if (c.ldb) *os << " ldb=" << c.ldb;
}

// One launch of the configuration on the problem, C poisoned first, checked against cuBLAS.
Accuracy run_once(sgemm::testing::GpuContext& gpu, const ProblemSpec& spec, const ParamValues& config) {
    GemmProblem problem(spec, gpu.cublas, gpu.stream.get());
    const LoadedKernel& kernel = loaded_kernel("decode", config, gpu.device);
    problem.reserve_workspace(kernel.workspace_bytes(spec.M, spec.N, spec.K, problem.call_alignment()));
    problem.poison_output(gpu.stream.get());
    kernel.launch(problem.args(), gpu.stream.get());
    return problem.check_output();
}

Accuracy run_case(sgemm::testing::GpuContext& gpu, const DecodeCase& c, std::uint64_t seed) {
    ProblemSpec spec;
    spec.M = c.M, spec.N = c.N, spec.K = c.K, spec.lda = c.lda, spec.ldb = c.ldb, spec.alpha = c.alpha, spec.beta = c.beta;
    spec.trans_b = find_family("decode").value(c.config, "TB") != 0;
    spec.seed = seed;
    return run_once(gpu, spec, c.config);
}

class DecodeAgainstCublas : public ::testing::TestWithParam<DecodeCase> {};

TEST_P(DecodeAgainstCublas, MatchesWithinTolerance) {
    SGEMM_REQUIRE_GPU(gpu);
    const DecodeCase& c = GetParam();
    const Accuracy a = run_case(*gpu, c, 11 + c.M * 7 + c.N + c.K);
    EXPECT_TRUE(a.ok()) << a.verdict() << " (rel err norm " << a.rel_err_norm << ")";
}

std::vector<DecodeCase> decode_cases() {
    std::vector<DecodeCase> cases;
    // The last two own all of K in narrow strips: A's whole rows staged by cp.async (by
    // registers where K, the leading dimension of A, is not a multiple of 4).
    // The same six tiles read B both ways (TB, the second-last value, 0 and 1): with TB the
    // lanes of a warp lie 1, 2 (KW) or 8 side by side along k.
    std::vector<ParamValues> configs;
    for (int tb : {0, 1})
        for (ParamValues c : std::vector<ParamValues>{{8, 128, 8, 4, 1, 0, 4, 0, 0}, {1, 256, 4, 1, 1, 0, 1, 0, 0}, {32, 128, 8, 1, 0, 0, 8, 0, 0},
                                                      {4, 64, 2, 4, 0, 0, 3, 0, 0}, {2, 64, 32, 1, 1, 0, 1, 0, 0}, {4, 32, 64, 2, 0, 0, 1, 0, 0}}) {
            c[5] = tb;
            configs.push_back(c);
        }
    // B through a ring in shared memory (RING, the second-last value), both ways: 1, 2, 4
    // and 8 rows, with TB 4 and 8 lanes along k, UNROLL 1 and 2, unsplit and split-K, and
    // 8 rows owning 64-column strips with 32 groups along k.
    for (int tb : {0, 1})
        for (ParamValues c : std::vector<ParamValues>{{1, 64, 32, 1, 1, 1, 1, 3, 0}, {8, 128, 8, 1, 0, 1, 8, 6, 0},
                                                      {4, 64, 4, 2, 1, 1, 3, 3, 0}, {8, 256, 4, 1, 0, 1, 12, 6, 0},
                                                      {2, 128, 4, 2, 1, 1, 2, 6, 0}, {8, 64, 32, 1, 1, 1, 4, 3, 0}}) {
            c[5] = tb;
            configs.push_back(c);
        }
    // Split-K summed by the sum pass (SUM_PASS, the last value): B both ways, through the
    // ring, and 16 slices, the most the pass sums.
    for (const ParamValues& c : std::vector<ParamValues>{{8, 128, 8, 4, 1, 0, 4, 0, 1}, {4, 128, 4, 1, 1, 1, 8, 0, 1},
                                                         {8, 128, 8, 1, 0, 1, 4, 6, 1}, {2, 64, 8, 2, 1, 0, 16, 0, 1},
                                                         {8, 128, 16, 1, 1, 0, 4, 3, 1}})
        configs.push_back(c);
    const std::vector<std::tuple<int, int, int>> shapes = {
        {1, 1, 1}, {7, 13, 5}, {17, 31, 7}, {128, 128, 128}, {1000, 3000, 2000},
        {1, 6144, 4093}, {8, 4096, 4095}, {32, 1000, 14337}, {33, 4097, 1000}};
    for (const ParamValues& config : configs)
        for (const auto& [m, n, k] : shapes) {
            cases.push_back({config, m, n, k, 1.5f, 0.5f});
            cases.push_back({config, m, n, k, -0.75f, 0.0f});
        }
    // 8 rows owning all of K in 64-column strips through a ring (the batch-8 qkv winner's
    // kind), where A's rows and the ring fit shared memory together, both ways.
    for (int tb : {0, 1})
        for (const auto& [m, n, k] : std::vector<std::tuple<int, int, int>>{{1, 1, 1}, {7, 13, 5}, {1, 6144, 4093}, {8, 4096, 4095}, {33, 4097, 1000}}) {
            cases.push_back({{8, 64, 32, 1, 1, tb, 1, 3, 0}, m, n, k, 1.5f, 0.5f});
            cases.push_back({{8, 64, 32, 1, 1, tb, 1, 3, 0}, m, n, k, -0.75f, 0.0f});
        }
    // A sum-pass binary whose split kernel needs 226,304 bytes of dynamic shared memory, near
    // sm_90's 232,448: the host raises both kernels' limit to that, which fails if the pass
    // holds static shared memory of its own (16 KB did).
    cases.push_back({{8, 128, 8, 1, 0, 1, 4, 6, 1}, 32, 1000, 16000, 1.0f, 0.0f});
    // The largest odd shape of the foundation list, once each way: 512 row tiles each stream B.
    cases.push_back({{8, 128, 8, 4, 1, 0, 4, 0, 0}, 4095, 4097, 4093, 1.0f, 0.0f});
    cases.push_back({{8, 128, 8, 4, 1, 1, 4, 0, 0}, 4095, 4097, 4093, 1.0f, 0.0f});
    cases.push_back({{8, 128, 8, 1, 1, 1, 4, 6, 0}, 4095, 4097, 4093, 1.0f, 0.0f});
    cases.push_back({{8, 128, 8, 1, 1, 0, 4, 6, 0}, 4095, 4097, 4093, 1.0f, 0.0f});
    // B's rows padded (ldb past the stored length) keep 16-byte loads, and a B whose rows
    // are 16-byte aligned nowhere (ldb odd) takes the element-wise path, both ways.
    for (const ParamValues& config : {ParamValues{8, 128, 8, 4, 1, 0, 4, 0, 0}, ParamValues{8, 128, 8, 4, 1, 1, 4, 0, 0},
                                      ParamValues{8, 128, 8, 1, 1, 1, 4, 6, 0}, ParamValues{8, 128, 8, 1, 1, 0, 4, 6, 0}})
        for (int ldb : {4100, 4097}) cases.push_back({config, 8, 4095, 4093, 1.0f, 0.5f, 0, ldb});
    return cases;
}

INSTANTIATE_TEST_SUITE_P(OddAndDecodeShapes, DecodeAgainstCublas, ::testing::ValuesIn(decode_cases()));

// A padded to a multiple of 4 floats a row allows 16-byte copies while K does not end on a
// vector: the last copy of each row of A reads 1 to 3 floats and zero-fills the rest, and
// the random padding behind it must not leak into C. Unsplit and split-K, on sm_80+ the
// cp.async path.
TEST(DecodeStagingOfA, PartialVectorsAtTheEndOfKLeavePaddingOut) {
    SGEMM_REQUIRE_GPU(gpu);
    for (const ParamValues& config : {ParamValues{2, 64, 32, 1, 1, 0, 1, 0, 0}, ParamValues{8, 128, 8, 4, 1, 0, 4, 0, 0}})
        for (int k : {4093, 4094, 4095}) {
            const Accuracy a = run_case(*gpu, {config, 8, 1000, k, 1.0f, 0.0f, /*lda=*/4096}, 5 + k);
            EXPECT_TRUE(a.ok()) << "MT=" << config[0] << " SPLITS=" << config[6] << " K=" << k << ": " << a.verdict();
        }
}

// Split-K reduces in a fixed order: the same inputs give the same bits, launch after
// launch, and the tile counters are left ready for the next launch. B stored both ways, in
// registers and through a ring.
TEST(DecodeSplitK, RepeatsBitForBit) {
    SGEMM_REQUIRE_GPU(gpu);
    for (const ParamValues& config : {ParamValues{8, 128, 8, 4, 1, 0, 12, 0, 0}, ParamValues{8, 128, 8, 4, 1, 1, 12, 0, 0},
                                      ParamValues{8, 128, 8, 1, 1, 1, 12, 6, 0}, ParamValues{8, 128, 8, 1, 1, 0, 12, 6, 0}}) {
        const int tb = config[5];
        ProblemSpec spec;
        spec.M = 8, spec.N = 4096, spec.K = 4093, spec.alpha = 1.0f, spec.beta = 0.0f, spec.trans_b = tb;
        GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
        const LoadedKernel& kernel = loaded_kernel("decode", config, gpu->device);
        problem.reserve_workspace(kernel.workspace_bytes(spec.M, spec.N, spec.K, problem.call_alignment()));
        std::vector<float> first;
        for (int run = 0; run < 4; ++run) {
            problem.poison_output(gpu->stream.get());
            kernel.launch(problem.args(), gpu->stream.get());
            ASSERT_TRUE(problem.check_output().ok()) << "TB=" << tb << " run " << run;
            const std::vector<float> out = problem.download_output();
            if (run == 0)
                first = out;
            else
                EXPECT_EQ(out, first) << "TB=" << tb << " run " << run << " differs from run 0";
        }
    }
}

// The sum pass adds the slices in the in-kernel finish's order, from the same +0.0f: the
// two give the same bits, with C's rows a multiple of 4 floats and not, B both ways.
TEST(DecodeSplitK, TheSumPassGivesTheInKernelSumsBits) {
    SGEMM_REQUIRE_GPU(gpu);
    for (const auto& [in_kernel, n] : {std::pair{ParamValues{8, 128, 8, 4, 1, 0, 8, 0, 0}, 4096},
                                       std::pair{ParamValues{4, 128, 4, 1, 1, 1, 6, 0, 0}, 4097}}) {
        ParamValues summed = in_kernel;
        summed[8] = 1;
        ProblemSpec spec;
        spec.M = 8, spec.N = n, spec.K = 4093, spec.alpha = -0.75f, spec.beta = 0.0f, spec.trans_b = in_kernel[5];
        GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
        std::vector<float> outputs[2];
        for (int pass : {0, 1}) {
            const LoadedKernel& kernel = loaded_kernel("decode", pass ? summed : in_kernel, gpu->device);
            problem.reserve_workspace(kernel.workspace_bytes(spec.M, spec.N, spec.K, problem.call_alignment()));
            problem.poison_output(gpu->stream.get());
            kernel.launch(problem.args(), gpu->stream.get());
            ASSERT_TRUE(problem.check_output().ok()) << "SUM_PASS=" << pass;
            outputs[pass] = problem.download_output();
        }
        EXPECT_EQ(outputs[1], outputs[0]) << find_family("decode").describe(summed);
    }
}

// A C that takes no 16-byte stores while N is a multiple of 4, so that the partials do: its
// rows padded to N + 1 floats, or its start one float off 16-byte alignment (A and B too). The pass
// must store C a float at a time; a 16-byte store there is a misaligned-address fault.
TEST(DecodeSplitK, TheSumPassStoresIntoACThatTakesNo16ByteStores) {
    SGEMM_REQUIRE_GPU(gpu);
    for (const ParamValues& config : {ParamValues{8, 128, 8, 4, 1, 0, 4, 0, 1}, ParamValues{8, 128, 8, 1, 0, 1, 4, 6, 1}})
        for (bool padded_rows : {true, false})
            for (float beta : {0.5f, 0.0f}) {
                ProblemSpec spec;
                spec.M = 8, spec.N = 4096, spec.K = 1000, spec.alpha = -0.75f, spec.beta = beta, spec.trans_b = config[5];
                if (padded_rows)
                    spec.ldc = spec.N + 1;
                else
                    spec.offset_floats = 1;
                const Accuracy a = run_once(*gpu, spec, config);
                EXPECT_TRUE(a.ok()) << find_family("decode").describe(config) << (padded_rows ? ", ldc N + 1" : ", offset")
                                    << ", beta " << beta << ": " << a.verdict();
            }
}

// Configurations with different tile counts take turns on one workspace, as they do in
// dispatch: the counters of one must never land on the partial results of another.
TEST(DecodeSplitK, ConfigurationsShareOneWorkspace) {
    SGEMM_REQUIRE_GPU(gpu);
    ProblemSpec spec;
    spec.M = 32, spec.N = 28672, spec.K = 4096, spec.alpha = 1.0f, spec.beta = 0.0f;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    const std::vector<ParamValues> configs = {{32, 128, 8, 1, 1, 0, 4, 0, 0}, {32, 64, 8, 1, 0, 0, 4, 0, 0}, {16, 128, 8, 2, 1, 0, 8, 0, 0}, {32, 128, 8, 1, 1, 0, 4, 0, 0}};
    auto workspace_of = [&](const ParamValues& c) {
        return loaded_kernel("decode", c, gpu->device).workspace_bytes(spec.M, spec.N, spec.K, problem.call_alignment());
    };
    // Room for the largest first, so that the workspace never moves; each run then declares
    // its own, and the check holds it to that.
    for (const ParamValues& c : configs) problem.reserve_workspace(workspace_of(c));
    for (int round = 0; round < 2; ++round)
        for (const ParamValues& c : configs) {
            problem.reserve_workspace(workspace_of(c));
            problem.poison_output(gpu->stream.get());
            loaded_kernel("decode", c, gpu->device).launch(problem.args(), gpu->stream.get());
            const Accuracy a = problem.check_output();
            EXPECT_TRUE(a.ok()) << "round " << round << " config MT=" << c[0] << " BN=" << c[1] << " SPLITS=" << c[6]
                                << ": " << a.verdict();
        }
}

}  // namespace
