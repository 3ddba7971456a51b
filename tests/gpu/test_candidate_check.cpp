// The tuner's check of a compiled candidate before it is timed: a right kernel passes, and a
// cubin that does not load, a launch the GPU refuses, or a wrong result makes the candidate
// invalid with the reason, leaving the GPU usable for the next one.
#include <gtest/gtest.h>

#include <functional>

#include "tests/gpu/gpu_test_env.h"
#include "tuner/candidate_check.h"

using namespace sgemm;

namespace {

// 17 x 31 x 7: odd, and smaller than any tile.
ProblemSpec odd_problem() {
    ProblemSpec spec;
    spec.M = 17, spec.N = 31, spec.K = 7;
    return spec;
}

// The naive family's default kernel, compiled for this GPU, with the family it is launched
// as: a copy whose launch geometry a test may change.
struct NaiveCandidate {
    explicit NaiveCandidate(const DeviceInfo& device)
        : family(find_family("naive")), compiled(compile_kernel(family, family.defaults, Arch{device.sm()})) {}
    // Launches with the family's geometry as `change` leaves it.
    void change_geometry(const std::function<void(LaunchGeometry&)>& change) {
        family.geometry = [geometry = family.geometry, change](const ParamValues& v, int M, int N, int K) {
            LaunchGeometry g = geometry(v, M, N, K);
            change(g);
            return g;
        };
    }
    Family family;
    CompiledKernel compiled;
};

// The kernel `name` of `source` (with `defines`), launched as naive's default is, checked on
// `problem` and `other_layout`: a kernel written for a test stands in for a candidate.
CheckedCandidate check_standalone(sgemm::testing::GpuContext& gpu, const std::string& name, const char* source,
                                  const std::vector<std::string>& defines, GemmProblem& problem,
                                  GemmProblem& other_layout) {
    NaiveCandidate naive(gpu.device);
    const StandaloneKernel kernel =
        compile_standalone(name + ".cu", source, defines, Arch{gpu.device.sm()}, "sgemm_common.cuh");
    naive.compiled.cubin = kernel.cubin;
    naive.compiled.ptxas = kernel.ptxas;
    naive.compiled.lowered_name = name;
    return check_candidate(naive.family, naive.compiled, problem, other_layout, gpu.stream.get());
}

// The candidate is invalid, for a reason that begins with `reason_start`; the reason. With
// `gpu_unharmed`, cuBLAS on the problem is then still judged right: the GPU took no lasting
// harm, and a run could go on.
std::string expect_invalid(sgemm::testing::GpuContext& gpu, const NaiveCandidate& naive,
                           const std::string& reason_start, bool gpu_unharmed) {
    GemmProblem problem(odd_problem(), gpu.cublas, gpu.stream.get());
    GemmProblem other_layout(problem, other_layout_for(problem.spec()), gpu.stream.get());
    const CheckedCandidate checked =
        check_candidate(naive.family, naive.compiled, problem, other_layout, gpu.stream.get());
    EXPECT_EQ(checked.kernel, nullptr);
    EXPECT_EQ(checked.invalid_reason.rfind(reason_start, 0), 0u) << checked.invalid_reason;
    if (gpu_unharmed) {
        problem.poison_output(gpu.stream.get());
        gpu.cublas.sgemm(problem.args(), gpu.stream.get());
        const Accuracy after = problem.check_output();
        EXPECT_TRUE(after.ok()) << after.verdict();
    }
    return checked.invalid_reason;
}

TEST(CandidateCheck, ARightKernelIsLoadedAndJudgedOnEveryRun) {
    SGEMM_REQUIRE_GPU(gpu);
    const NaiveCandidate naive(gpu->device);
    GemmProblem problem(odd_problem(), gpu->cublas, gpu->stream.get());
    GemmProblem other_layout(problem, other_layout_for(problem.spec()), gpu->stream.get());
    const CheckedCandidate checked =
        check_candidate(naive.family, naive.compiled, problem, other_layout, gpu->stream.get());
    ASSERT_NE(checked.kernel, nullptr) << checked.invalid_reason;
    EXPECT_EQ(checked.invalid_reason, "");
    EXPECT_TRUE(checked.accuracy.ok());
    EXPECT_LE(checked.accuracy.max_scaled_err, checked.accuracy.tolerance);
    // Both left at their own scalars; the timing runs use the first's.
    for (const GemmProblem* p : {&problem, &other_layout}) {
        EXPECT_EQ(p->args().alpha, 1.0f);
        EXPECT_EQ(p->args().beta, 0.0f);
    }
}

// The same operands laid out anew: the same class, each operand's alignment as
// other_layout_for says, and cuBLAS judged right on them at the check's three scalars (the
// reference was laid out anew), for every transpose, tight and padded rows, and a start off
// 16 bytes.
TEST(CandidateCheck, TheOtherLayoutHoldsTheSameProblem) {
    SGEMM_REQUIRE_GPU(gpu);
    for (int trans = 0; trans < 4; ++trans)
        for (int offset : {0, 1}) {
            ProblemSpec spec = odd_problem();
            spec.trans_a = trans & 1, spec.trans_b = trans & 2;
            spec.offset_floats = offset;
            if (offset) spec.lda = 20, spec.ldb = 36, spec.ldc = 36;  // at least 17, 31 (or 7) and 31
            GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
            const LeadingDimensions lds = other_layout_for(problem.spec());
            GemmProblem other(problem, lds, gpu->stream.get());
            const SgemmArgs b = other.args();
            EXPECT_EQ(b.lda, lds.lda);
            EXPECT_EQ(b.ldb, lds.ldb);
            EXPECT_EQ(b.ldc, lds.ldc);
            // All three start at 256-byte boundaries.
            EXPECT_EQ((reinterpret_cast<std::uintptr_t>(b.A) | reinterpret_cast<std::uintptr_t>(b.B) |
                       reinterpret_cast<std::uintptr_t>(b.C)) % 256,
                      0u);
            EXPECT_EQ(other.call_alignment(), problem.call_alignment());
            for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{-1.5f, 0.0f}, std::pair{-1.5f, 0.75f}}) {
                other.set_scalars(alpha, beta);
                other.poison_output(gpu->stream.get());
                gpu->cublas.sgemm(other.args(), gpu->stream.get(), spec.trans_a, spec.trans_b);
                const Accuracy judged = other.check_output();
                EXPECT_TRUE(judged.ok()) << "trans " << trans << " offset " << offset << ": " << judged.verdict();
            }
        }
}

// Naive's product through the families' arguments, with each leading dimension taken from
// LDA, LDB and LDC (the call's own, or a row's length), and READ_PAST_ROW_END(p, row) added
// to each sum: 0 times a value, which a kernel that reads past a row's end but masks it by
// multiplying meets.
constexpr const char* kNaiveWithItsOwnLeadingDimensions = R"(#include "sgemm_common.cuh"
extern "C" __global__ void own_ld(const SgemmArgs p) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= p.M || col >= p.N) return;
    SgemmArgs q = p;
    q.lda = LDA, q.ldb = LDB, q.ldc = LDC;
    float acc = 0.0f;
    for (int k = 0; k < p.K; ++k) acc = fmaf(q.A[sgemm_offset(row, k, q.lda)], q.B[sgemm_offset(k, col, q.ldb)], acc);
    acc += READ_PAST_ROW_END(q, row);
    sgemm_store(q, row, col, acc);
}
)";

// A kernel that takes a row's length for a leading dimension, or whose result depends on what
// lies past a row's end, is right on the tuner's tight operands, and so passed the check
// before it judged later runs on longer rows. Each now fails there; the same kernel with the
// call's own leading dimensions passes.
TEST(CandidateCheck, AKernelRightOnlyOnTightRowsIsAWrongResultOnLongerOnes) {
    SGEMM_REQUIRE_GPU(gpu);
    GemmProblem problem(odd_problem(), gpu->cublas, gpu->stream.get());
    GemmProblem other_layout(problem, other_layout_for(problem.spec()), gpu->stream.get());
    const auto check = [&](const std::vector<std::string>& defines) {
        return check_standalone(*gpu, "own_ld", kNaiveWithItsOwnLeadingDimensions, defines, problem, other_layout);
    };
    const std::string own = "LDA=p.lda", own_b = "LDB=p.ldb", own_c = "LDC=p.ldc", nothing_past = "READ_PAST_ROW_END(q,r)=0.0f";
    const CheckedCandidate right = check({own, own_b, own_c, nothing_past});
    EXPECT_NE(right.kernel, nullptr) << right.invalid_reason;
    // A's row past its end is the next row's start on tight rows (the last row reads nothing).
    const std::string reads_past = "READ_PAST_ROW_END(q,r)=(r + 1 < q.M ? 0.0f * q.A[sgemm_offset(r, q.K, q.lda)] : 0.0f)";
    for (const std::vector<std::string>& wrong : {std::vector<std::string>{"LDA=p.K", own_b, own_c, nothing_past},
                                                 std::vector<std::string>{own, "LDB=p.N", own_c, nothing_past},
                                                 std::vector<std::string>{own, own_b, "LDC=p.N", nothing_past},
                                                 std::vector<std::string>{own, own_b, own_c, reads_past}}) {
        const CheckedCandidate checked = check(wrong);
        EXPECT_EQ(checked.kernel, nullptr) << wrong[0] << " " << wrong[1] << " " << wrong[2] << " " << wrong[3];
        EXPECT_EQ(checked.invalid_reason.rfind("wrong result at alpha -1.5 and beta 0 on rows laid out anew (lda 12, ldb 36, "
                                               "ldc 35): ",
                                               0),
                  0u)
            << checked.invalid_reason;
    }
}

// Kernels choose 16-byte or 4-byte accesses operand by operand, so a binary that tests one
// operand's alignment where it means another's is right on the layout it was tuned on and
// wrong where dispatch hands it a call of the same class with the other operand misaligned.
// Each such kernel here reads A or B, or writes C, with its leading dimension rounded down to
// a multiple of 4 when another operand takes 16-byte accesses: right on the tight layout, where that
// other operand does not, and a wrong result on the layout the check turns over. The first
// checks could not see it: they kept each operand's alignment.
TEST(CandidateCheck, AKernelThatTakesOneOperandsAlignmentForAnothersIsAWrongResult) {
    SGEMM_REQUIRE_GPU(gpu);
    const std::string own_a = "LDA=p.lda", own_b = "LDB=p.ldb", own_c = "LDC=p.ldc", nothing_past = "READ_PAST_ROW_END(q,r)=0.0f";
    struct Case {
        int M, N, K;  // NN and tight: which operands take 16-byte accesses follows from N and K
        std::vector<std::string> defines;
    };
    // 17 x 32 x 7: A misaligned (lda 7), B and C aligned; 17 x 31 x 8: A aligned, B and C not.
    const std::string b_by_a = "LDB=(sgemm_vec4_ok(p.A, p.lda) ? p.ldb / 4 * 4 : p.ldb)",
                      c_by_a = "LDC=(sgemm_vec4_ok(p.A, p.lda) ? p.ldc / 4 * 4 : p.ldc)",
                      a_by_b = "LDA=(sgemm_vec4_ok(p.B, p.ldb) ? p.lda / 4 * 4 : p.lda)";
    for (const Case& c : {Case{17, 32, 7, {own_a, b_by_a, own_c, nothing_past}},
                          Case{17, 32, 7, {own_a, own_b, c_by_a, nothing_past}},
                          Case{17, 31, 8, {a_by_b, own_b, own_c, nothing_past}}}) {
        ProblemSpec spec;
        spec.M = c.M, spec.N = c.N, spec.K = c.K;
        GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
        ASSERT_EQ(problem.call_alignment(), 4);
        GemmProblem other_layout(problem, other_layout_for(problem.spec()), gpu->stream.get());
        const auto check = [&](const std::vector<std::string>& defines) {
            return check_standalone(*gpu, "own_ld", kNaiveWithItsOwnLeadingDimensions, defines, problem, other_layout);
        };
        const CheckedCandidate right = check({own_a, own_b, own_c, nothing_past});
        EXPECT_NE(right.kernel, nullptr) << right.invalid_reason;
        const CheckedCandidate wrong = check(c.defines);
        EXPECT_EQ(wrong.kernel, nullptr) << c.defines[0] << " " << c.defines[1] << " " << c.defines[2];
        EXPECT_EQ(wrong.invalid_reason.rfind("wrong result at alpha -1.5 and beta 0 on rows laid out anew", 0), 0u)
            << wrong.invalid_reason;
    }
}

// Naive's product through the families' arguments, with its own epilogue: BETA_0_RESULT is
// what it writes when beta is 0.
constexpr const char* kNaiveWithItsOwnEpilogue = R"(#include "sgemm_common.cuh"
extern "C" __global__ void own_epilogue(const SgemmArgs p) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= p.M || col >= p.N) return;
    float acc = 0.0f;
    for (int k = 0; k < p.K; ++k) acc = fmaf(p.A[sgemm_offset(row, k, p.lda)], p.B[sgemm_offset(k, col, p.ldb)], acc);
    float* c = p.C + sgemm_offset(row, col, p.ldc);
    *c = p.beta == 0.0f ? BETA_0_RESULT : p.alpha * acc + p.beta * *c;
}
)";

// A kernel that drops alpha when beta is 0 is right at the scalars the tuner times (1 and 0)
// and at any alpha with beta not 0, the two runs the check judged before: the run at alpha
// -1.5 and beta 0 now fails it. Applying alpha passes.
TEST(CandidateCheck, AKernelThatDropsAlphaWhenBetaIsZeroIsAWrongResult) {
    SGEMM_REQUIRE_GPU(gpu);
    GemmProblem problem(odd_problem(), gpu->cublas, gpu->stream.get());
    GemmProblem other_layout(problem, other_layout_for(problem.spec()), gpu->stream.get());
    const auto check = [&](const std::string& beta_0_result) {
        return check_standalone(*gpu, "own_epilogue", kNaiveWithItsOwnEpilogue, {"BETA_0_RESULT=" + beta_0_result},
                                problem, other_layout);
    };
    const CheckedCandidate right = check("p.alpha * acc");
    EXPECT_NE(right.kernel, nullptr) << right.invalid_reason;
    const CheckedCandidate drops = check("acc");
    EXPECT_EQ(drops.kernel, nullptr);
    EXPECT_EQ(drops.invalid_reason.rfind("wrong result at alpha -1.5 and beta 0 on rows laid out anew", 0), 0u)
        << drops.invalid_reason;
}

TEST(CandidateCheck, ALaunchTheGpuRefusesMakesTheCandidateInvalidAndTheRunGoesOn) {
    SGEMM_REQUIRE_GPU(gpu);
    NaiveCandidate naive(gpu->device);
    naive.change_geometry([](LaunchGeometry& g) { g.block = dim3(2048); });  // past the 1024 threads a block may have
    // The H200's runtime says cudaErrorInvalidValue here; which error a refusal names is the runtime's.
    expect_invalid(*gpu, naive, "does not launch: CUDA error: ", true);
}

TEST(CandidateCheck, ACubinThatDoesNotLoadMakesTheCandidateInvalid) {
    SGEMM_REQUIRE_GPU(gpu);
    NaiveCandidate naive(gpu->device);
    // Neither ELF nor fatbin: the loader takes it for PTX text, which must end in a NUL.
    naive.compiled.cubin.assign(naive.compiled.cubin.size(), 'Z');
    naive.compiled.cubin.push_back('\0');
    expect_invalid(*gpu, naive, "does not load: CUDA error: ", true);
}

TEST(CandidateCheck, AKernelThatLeavesElementsUnwrittenIsAWrongResult) {
    SGEMM_REQUIRE_GPU(gpu);
    NaiveCandidate naive(gpu->device);
    // The first block row only (8 of the 17 rows): the rest keep their NaN.
    naive.change_geometry([](LaunchGeometry& g) { g.grid.y = 1; });
    const std::string reason = expect_invalid(*gpu, naive, "wrong result: ", false);
    EXPECT_NE(reason.find("NaN"), std::string::npos) << reason;
}

// Naive's product, one element a thread through the families' arguments and epilogue, with
// each operand read through ROUND_INPUT: as it is, or rounded to TF32 (10 bits of mantissa,
// as tensor cores read them), which every product's error then shows.
constexpr const char* kNaiveWithRoundedInputs = R"(#include "sgemm_common.cuh"
__device__ float to_tf32(float x) {
    unsigned int r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}
extern "C" __global__ void rounded(const SgemmArgs p) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= p.M || col >= p.N) return;
    float acc = 0.0f;
    for (int k = 0; k < p.K; ++k)
        acc = fmaf(ROUND_INPUT(p.A[sgemm_offset(row, k, p.lda)]), ROUND_INPUT(p.B[sgemm_offset(k, col, p.ldb)]), acc);
    sgemm_store(p, row, col, acc);
}
)";

// Inputs rounded to TF32 at K = 262144: their largest error (about 25 u on these 1024
// elements) is well under the tolerance there (68 u), and their root mean square (about 9 u
// against 4 u) makes the candidate invalid. The same kernel reading its inputs as they are
// passes, so the rounding is what fails it.
TEST(CandidateCheck, AKernelThatRoundsItsInputsToTf32IsAWrongResultAtLargeK) {
    SGEMM_REQUIRE_GPU(gpu);
    ProblemSpec spec;
    spec.M = 4, spec.N = 256, spec.K = 262144;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    GemmProblem other_layout(problem, other_layout_for(problem.spec()), gpu->stream.get());
    const auto check = [&](const std::string& round_input) {
        return check_standalone(*gpu, "rounded", kNaiveWithRoundedInputs, {"ROUND_INPUT(x)=" + round_input}, problem,
                                other_layout);
    };
    const CheckedCandidate as_read = check("(x)");
    EXPECT_NE(as_read.kernel, nullptr) << as_read.invalid_reason;
    const CheckedCandidate tf32 = check("to_tf32(x)");
    EXPECT_EQ(tf32.kernel, nullptr);
    EXPECT_EQ(tf32.invalid_reason.rfind("wrong result: the scaled errors' root mean square", 0), 0u)
        << tf32.invalid_reason;
}

}  // namespace
