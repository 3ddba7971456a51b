// Every ladder kernel at its default configuration against cuBLAS, on odd and aligned
// shapes, with alpha/beta and with beta = 0 over a C full of NaN (alpha -0.75 there, so a
// beta = 0 path that drops alpha shows).
#include <gtest/gtest.h>

#include "db/shape_key.h"
#include "tests/gpu/gpu_test_env.h"
#include "tuner/gemm_problem.h"

using namespace sgemm;

namespace {

struct Scaling {
    float alpha, beta;
    const char* name;
};

using LadderCase = std::tuple<std::string, std::tuple<int, int, int>, Scaling>;

class LadderAgainstCublas : public ::testing::TestWithParam<LadderCase> {};

const LoadedKernel& loaded(const std::string& family_name, const DeviceInfo& device) {
    return sgemm::testing::loaded_kernel(family_name, {}, device);
}

TEST_P(LadderAgainstCublas, MatchesWithinTolerance) {
    SGEMM_REQUIRE_GPU(gpu);
    const auto& [family, mnk, scaling] = GetParam();
    ProblemSpec spec;
    std::tie(spec.M, spec.N, spec.K) = mnk;
    spec.alpha = scaling.alpha;
    spec.beta = scaling.beta;
    spec.seed = 7 + spec.M + spec.N + spec.K;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());

    const LoadedKernel& kernel = loaded(family, gpu->device);
    problem.poison_output(gpu->stream.get());
    kernel.launch(problem.args(), gpu->stream.get());
    const Accuracy a = problem.check_output();
    EXPECT_TRUE(a.ok()) << family << " " << spec.M << "x" << spec.N << "x" << spec.K << ": " << a.verdict()
                        << " (rel err norm " << a.rel_err_norm << ")";
}

const Scaling kScalings[] = {{1.5f, 0.5f, "alpha1p5_beta0p5"}, {-0.75f, 0.0f, "alpha_m0p75_beta0_nanC"}};

std::string case_name(const ::testing::TestParamInfo<LadderCase>& info) {
    const auto& [m, n, k] = std::get<1>(info.param);
    return std::get<0>(info.param) + "_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
           "_" + std::get<2>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(
    OddAndAlignedShapes, LadderAgainstCublas,
    ::testing::Combine(::testing::Values("naive", "smem", "blocktile", "vec4", "async"),
                       ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(7, 13, 5),
                                         std::make_tuple(17, 31, 7), std::make_tuple(128, 128, 128),
                                         std::make_tuple(1000, 3000, 2000), std::make_tuple(4095, 4097, 4093)),
                       ::testing::ValuesIn(kScalings)),
    case_name);

// Leading dimensions larger than the row, and a B whose rows are not 16-byte aligned
// although its base is: the vector paths must notice and fall back.
TEST(LadderPadding, PaddedAndMisalignedLeadingDimensions) {
    SGEMM_REQUIRE_GPU(gpu);
    for (const char* family : {"naive", "smem", "blocktile", "vec4", "async"}) {
        ProblemSpec spec;
        spec.M = 67, spec.N = 130, spec.K = 45;
        spec.lda = 48, spec.ldb = 133, spec.ldc = 136;
        spec.alpha = -0.75f, spec.beta = 2.0f;
        GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
        problem.poison_output(gpu->stream.get());
        loaded(family, gpu->device).launch(problem.args(), gpu->stream.get());
        const Accuracy a = problem.check_output();
        EXPECT_TRUE(a.ok()) << family << ": " << a.verdict();
    }
}

// The check must be able to fail: a kernel that skips the last k, or the last row of C,
// is caught.
TEST(LadderValidation, CatchesAWrongResult) {
    SGEMM_REQUIRE_GPU(gpu);
    ProblemSpec spec;
    spec.M = 130, spec.N = 70, spec.K = 33;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    const LoadedKernel& kernel = loaded("async", gpu->device);

    SgemmArgs short_k = problem.args();
    short_k.K -= 1;
    problem.poison_output(gpu->stream.get());
    kernel.launch(short_k, gpu->stream.get());
    EXPECT_FALSE(problem.check_output().ok());

    SgemmArgs short_m = problem.args();
    short_m.M -= 1;
    problem.poison_output(gpu->stream.get());
    kernel.launch(short_m, gpu->stream.get());
    const Accuracy a = problem.check_output();
    EXPECT_FALSE(a.ok());
    EXPECT_EQ(a.nonfinite, static_cast<std::size_t>(spec.N));  // the unwritten row is still NaN
}

// A kernel that writes outside C's elements fails too: into the padding past column N - 1,
// before C's first element, or past its last row. The kernel is right; C's pointer is moved
// by a float, so every row's write lands one place off.
TEST(LadderValidation, CatchesWritesOutsideC) {
    SGEMM_REQUIRE_GPU(gpu);
    ProblemSpec padded;
    padded.M = 130, padded.N = 70, padded.K = 33, padded.ldc = 72;
    GemmProblem problem(padded, gpu->cublas, gpu->stream.get());
    const LoadedKernel& kernel = loaded("async", gpu->device);
    auto run_shifted = [&](GemmProblem& p, int shift) {
        SgemmArgs args = p.args();
        args.C += shift;
        p.poison_output(gpu->stream.get());
        kernel.launch(args, gpu->stream.get());
        return p.check_output();
    };

    Accuracy a = run_shifted(problem, 1);  // each row's last element lands in its padding
    EXPECT_EQ(a.outside_writes, 130u);
    EXPECT_EQ(a.verdict(), "wrote 130 floats outside C, the first at C[0][70], in the padding past column 69");

    a = run_shifted(problem, -1);  // the first before C, the others in the padding of the row before
    EXPECT_EQ(a.outside_writes, 130u);
    EXPECT_EQ(a.verdict(), "wrote 130 floats outside C, the first 1 float before C[0][0]");

    ProblemSpec tight = padded;
    tight.ldc = 0;
    GemmProblem tight_problem(tight, gpu->cublas, gpu->stream.get());
    a = run_shifted(tight_problem, 1);  // the last element lands past the last row
    EXPECT_EQ(a.outside_writes, 1u);
    EXPECT_EQ(a.verdict(), "wrote 1 float outside C, the first at C[130][0], past C's last row");

    // Unshifted, the same kernel passes: the guards and the padding keep their pattern.
    a = run_shifted(problem, 0);
    EXPECT_TRUE(a.ok()) << a.verdict();
    a = run_shifted(tight_problem, 0);
    EXPECT_TRUE(a.ok()) << a.verdict();
}

// Operands that start a float past 256 bytes (ProblemSpec::offset_floats, the tuner's class-4
// operands): the call has alignment class 4, a kernel computes the right answer against the
// fp64 reference too, and a write into the float before C (now inside the leading guard) is
// caught.
TEST(LadderValidation, OffsetOperandsKeepTheirClassTheReferenceAndTheGuards) {
    SGEMM_REQUIRE_GPU(gpu);
    for (bool fp64 : {false, true}) {
        ProblemSpec spec;
        spec.M = 37, spec.N = 64, spec.K = 28, spec.alpha = 1.5f, spec.beta = 0.5f;
        spec.offset_floats = 1;
        spec.fp64_reference = fp64;
        GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
        SgemmArgs args = problem.args();
        EXPECT_EQ(alignment_class(args.A, args.lda, args.B, args.ldb, args.C, args.ldc), 4);
        const LoadedKernel& kernel = loaded("async", gpu->device);
        problem.poison_output(gpu->stream.get());
        kernel.launch(args, gpu->stream.get());
        Accuracy a = problem.check_output();
        EXPECT_TRUE(a.ok()) << (fp64 ? "fp64: " : "fp32: ") << a.verdict();
        args.C -= 1;
        problem.poison_output(gpu->stream.get());
        kernel.launch(args, gpu->stream.get());
        a = problem.check_output();
        EXPECT_EQ(a.verdict(), "wrote 1 float outside C, the first 1 float before C[0][0]");
    }
}

}  // namespace
