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
// `problems`: a kernel written for a test stands in for a candidate.
CheckedCandidate check_standalone(sgemm::testing::GpuContext& gpu, const std::string& name, const char* source,
                                  const std::vector<std::string>& defines, CheckProblems& problems) {
    NaiveCandidate naive(gpu.device);
    const StandaloneKernel kernel =
        compile_standalone(name + ".cu", source, defines, Arch{gpu.device.sm()}, "sgemm_common.cuh");
    naive.compiled.cubin = kernel.cubin;
    naive.compiled.ptxas = kernel.ptxas;
    naive.compiled.lowered_name = name;
    return check_candidate(naive.family, naive.compiled, problems, gpu.stream.get());
}

// The candidate is invalid, for a reason that begins with `reason_start`; the reason. With
// `gpu_unharmed`, cuBLAS on the problem is then still judged right: the GPU took no lasting
// harm, and a run could go on.
std::string expect_invalid(sgemm::testing::GpuContext& gpu, const NaiveCandidate& naive,
                           const std::string& reason_start, bool gpu_unharmed) {
    CheckProblems problems(odd_problem(), gpu.cublas, gpu.stream.get());
    GemmProblem& problem = problems.first;
    const CheckedCandidate checked = check_candidate(naive.family, naive.compiled, problems, gpu.stream.get());
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
    CheckProblems problems(odd_problem(), gpu->cublas, gpu->stream.get());
    const CheckedCandidate checked = check_candidate(naive.family, naive.compiled, problems, gpu->stream.get());
    ASSERT_NE(checked.kernel, nullptr) << checked.invalid_reason;
    EXPECT_EQ(checked.invalid_reason, "");
    EXPECT_TRUE(checked.accuracy.ok());
    EXPECT_LE(checked.accuracy.max_scaled_err, checked.accuracy.tolerance);
    // Both left at their own scalars; the timing runs use the first's.
    ASSERT_EQ(problems.all().size(), 4u) << "class 4: three later layouts";
    for (const GemmProblem* p : problems.all()) {
        EXPECT_EQ(p->args().alpha, 1.0f);
        EXPECT_EQ(p->args().beta, 0.0f);
    }
}

// The same operands laid out anew: the same class, each operand's alignment as
// later_layouts_for says, and cuBLAS judged right on them at the check's three scalars (the
// reference was laid out anew), for every transpose, tight and padded rows, and a start off
// 16 bytes.
TEST(CandidateCheck, TheLaterLayoutsHoldTheSameProblem) {
    SGEMM_REQUIRE_GPU(gpu);
    for (int trans = 0; trans < 4; ++trans)
        for (int offset : {0, 1}) {
            ProblemSpec spec = odd_problem();
            spec.trans_a = trans & 1, spec.trans_b = trans & 2;
            spec.offset_floats = offset;
            if (offset) spec.lda = 20, spec.ldb = 36, spec.ldc = 36;  // at least 17, 31 (or 7) and 31
            CheckProblems problems(spec, gpu->cublas, gpu->stream.get());
            const std::vector<LeadingDimensions> layouts = later_layouts_for(problems.first.spec());
            ASSERT_EQ(problems.later.size(), layouts.size());
            for (std::size_t i = 0; i < layouts.size(); ++i) {
                GemmProblem& later = *problems.later[i];
                const SgemmArgs b = later.args();
                EXPECT_EQ(b.lda, layouts[i].lda);
                EXPECT_EQ(b.ldb, layouts[i].ldb);
                EXPECT_EQ(b.ldc, layouts[i].ldc);
                // All three start at 256-byte boundaries.
                EXPECT_EQ((reinterpret_cast<std::uintptr_t>(b.A) | reinterpret_cast<std::uintptr_t>(b.B) |
                           reinterpret_cast<std::uintptr_t>(b.C)) % 256,
                          0u);
                EXPECT_EQ(later.call_alignment(), problems.first.call_alignment());
                for (const auto& [alpha, beta] :
                     {std::pair{1.0f, 0.0f}, std::pair{-1.5f, 0.0f}, std::pair{-1.5f, 0.75f}}) {
                    later.set_scalars(alpha, beta);
                    later.poison_output(gpu->stream.get());
                    gpu->cublas.sgemm(later.args(), gpu->stream.get(), spec.trans_a, spec.trans_b);
                    const Accuracy judged = later.check_output();
                    EXPECT_TRUE(judged.ok()) << "trans " << trans << " offset " << offset << " layout " << i << ": "
                                             << judged.verdict();
                }
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
    CheckProblems problems(odd_problem(), gpu->cublas, gpu->stream.get());
    const auto check = [&](const std::vector<std::string>& defines) {
        return check_standalone(*gpu, "own_ld", kNaiveWithItsOwnLeadingDimensions, defines, problems);
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
// Each kernel here reads A or B, or writes C, with its leading dimension rounded down to a
// multiple of 4 when another operand takes 16-byte accesses: wrong exactly where that other
// operand is aligned and its own is not. On three tight layouts of class 4 (none, one and two
// operands aligned), each of the six such kernels is invalid, and each that is right on the
// tuner's layout is caught by a later run. The first checks kept each operand's alignment
// and caught none of them; the next turned each over and missed those whose pair shares
// its alignment in both layouts: A by B and B by A where all three start misaligned.
TEST(CandidateCheck, AKernelThatTakesOneOperandsAlignmentForAnothersIsAWrongResult) {
    SGEMM_REQUIRE_GPU(gpu);
    const char* const own[3] = {"LDA=p.lda", "LDB=p.ldb", "LDC=p.ldc"};
    const char* const operand[3] = {"A", "B", "C"};
    const char* const test_of[3] = {"sgemm_vec4_ok(p.A, p.lda)", "sgemm_vec4_ok(p.B, p.ldb)", "sgemm_vec4_ok(p.C, p.ldc)"};
    const std::string nothing_past = "READ_PAST_ROW_END(q,r)=0.0f";
    // NN and tight, so N and K say which operands take 16-byte accesses: A's rows are K long,
    // B's and C's N.
    struct Shape {
        int M, N, K;
        bool aligned[3];
    };
    int caught_later = 0;
    for (const Shape& shape : {Shape{17, 31, 7, {false, false, false}}, Shape{17, 32, 7, {false, true, true}},
                               Shape{17, 31, 8, {true, false, false}}}) {
        ProblemSpec spec;
        spec.M = shape.M, spec.N = shape.N, spec.K = shape.K;
        CheckProblems problems(spec, gpu->cublas, gpu->stream.get());
        ASSERT_EQ(problems.first.call_alignment(), 4);
        const auto check = [&](const std::vector<std::string>& defines) {
            return check_standalone(*gpu, "own_ld", kNaiveWithItsOwnLeadingDimensions, defines, problems);
        };
        const CheckedCandidate right = check({own[0], own[1], own[2], nothing_past});
        EXPECT_NE(right.kernel, nullptr) << right.invalid_reason;
        for (int wrong = 0; wrong < 3; ++wrong)
            for (int by = 0; by < 3; ++by) {
                if (by == wrong) continue;
                std::vector<std::string> defines = {own[0], own[1], own[2], nothing_past};
                defines[wrong] = std::string("LD") + operand[wrong] + "=(" + test_of[by] + " ? p.ld" +
                                 static_cast<char>('a' + wrong) + " / 4 * 4 : p.ld" +
                                 static_cast<char>('a' + wrong) + ")";
                const CheckedCandidate checked = check(defines);
                const std::string what = std::string(operand[wrong]) + " by " + operand[by] + "'s alignment, M=" +
                                         std::to_string(shape.M) + " N=" + std::to_string(shape.N) +
                                         " K=" + std::to_string(shape.K);
                EXPECT_EQ(checked.kernel, nullptr) << what;
                const bool right_on_the_first = !(shape.aligned[by] && !shape.aligned[wrong]);
                if (right_on_the_first) {
                    EXPECT_NE(checked.invalid_reason.find("on rows laid out anew"), std::string::npos)
                        << what << ": " << checked.invalid_reason;
                    ++caught_later;
                }
            }
    }
    // 6 where none is aligned, 4 where one or two are.
    EXPECT_EQ(caught_later, 14);
}

// Naive's product through the families' arguments, with its own epilogue: BETA_0_RESULT is
// what it writes when beta is 0, and when beta is not, it reads C's element through the
// leading dimension READ_LDC.
constexpr const char* kNaiveWithItsOwnEpilogue = R"(#include "sgemm_common.cuh"
extern "C" __global__ void own_epilogue(const SgemmArgs p) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= p.M || col >= p.N) return;
    float acc = 0.0f;
    for (int k = 0; k < p.K; ++k) acc = fmaf(p.A[sgemm_offset(row, k, p.lda)], p.B[sgemm_offset(k, col, p.ldb)], acc);
    float* c = p.C + sgemm_offset(row, col, p.ldc);
    *c = p.beta == 0.0f ? BETA_0_RESULT : p.alpha * acc + p.beta * p.C[sgemm_offset(row, col, READ_LDC)];
}
)";

// kNaiveWithItsOwnEpilogue with these two, checked on `problems`.
CheckedCandidate check_own_epilogue(sgemm::testing::GpuContext& gpu, const std::string& beta_0_result,
                                    const std::string& read_ldc, CheckProblems& problems) {
    return check_standalone(gpu, "own_epilogue", kNaiveWithItsOwnEpilogue,
                            {"BETA_0_RESULT=" + beta_0_result, "READ_LDC=" + read_ldc}, problems);
}

// A kernel that drops alpha when beta is 0 is right at the scalars the tuner times (1 and 0)
// and at any alpha with beta not 0, the two runs the check judged before: the run at alpha
// -1.5 and beta 0 now fails it. Applying alpha passes.
TEST(CandidateCheck, AKernelThatDropsAlphaWhenBetaIsZeroIsAWrongResult) {
    SGEMM_REQUIRE_GPU(gpu);
    CheckProblems problems(odd_problem(), gpu->cublas, gpu->stream.get());
    const CheckedCandidate right = check_own_epilogue(*gpu, "p.alpha * acc", "p.ldc", problems);
    EXPECT_NE(right.kernel, nullptr) << right.invalid_reason;
    const CheckedCandidate drops = check_own_epilogue(*gpu, "acc", "p.ldc", problems);
    EXPECT_EQ(drops.kernel, nullptr);
    EXPECT_EQ(drops.invalid_reason.rfind("wrong result at alpha -1.5 and beta 0 on rows laid out anew", 0), 0u)
        << drops.invalid_reason;
}

// A kernel that reads C (beta not 0) with another operand's alignment taken for C's, as the
// LD kernels above write it, is wrong only where that operand is aligned and C is not. With
// A alone aligned on the tuner's rows (17 x 31 x 8), no run that read C had that: C was read
// only on the later layouts, where A is not aligned. Every layout now has a run that reads C.
TEST(CandidateCheck, AKernelThatReadsCWithAnothersAlignmentIsAWrongResult) {
    SGEMM_REQUIRE_GPU(gpu);
    ProblemSpec spec;
    spec.M = 17, spec.N = 31, spec.K = 8;
    CheckProblems problems(spec, gpu->cublas, gpu->stream.get());
    const CheckedCandidate right = check_own_epilogue(*gpu, "p.alpha * acc", "p.ldc", problems);
    EXPECT_NE(right.kernel, nullptr) << right.invalid_reason;
    const CheckedCandidate wrong =
        check_own_epilogue(*gpu, "p.alpha * acc", "(sgemm_vec4_ok(p.A, p.lda) ? p.ldc / 4 * 4 : p.ldc)", problems);
    EXPECT_EQ(wrong.kernel, nullptr);
    EXPECT_EQ(wrong.invalid_reason.rfind("wrong result at alpha -1.5 and beta 0.75 on the tuner's rows", 0), 0u)
        << wrong.invalid_reason;
}

TEST(CandidateCheck, ALaunchTheGpuRefusesMakesTheCandidateInvalidAndTheRunGoesOn) {
    SGEMM_REQUIRE_GPU(gpu);
    NaiveCandidate naive(gpu->device);
    naive.change_geometry([](LaunchGeometry& g) { g.block = dim3(2048); });  // past the 1024 threads a block may have
    // The H200's runtime says cudaErrorInvalidValue here; which error a refusal names is the runtime's.
    expect_invalid(*gpu, naive, "does not launch: CUDA error: ", true);
}

// A kernel whose ptxas report shows spills is invalid before it is loaded or run: the
// tuner rejects spilling configurations (their local-memory traffic), however right they are.
// Its cubin is made unloadable too, so that a check that loaded it first would say so instead.
TEST(CandidateCheck, AKernelThatSpillsIsInvalidBeforeItRuns) {
    SGEMM_REQUIRE_GPU(gpu);
    NaiveCandidate naive(gpu->device);
    naive.compiled.cubin.assign(naive.compiled.cubin.size(), 'Z');
    naive.compiled.cubin.push_back('\0');
    naive.compiled.ptxas.spill_store_bytes = 8;
    naive.compiled.ptxas.spill_load_bytes = 4;
    expect_invalid(*gpu, naive, "spills to local memory (8 B stored, 4 B loaded)", false);
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
    CheckProblems problems(spec, gpu->cublas, gpu->stream.get());
    const auto check = [&](const std::string& round_input) {
        return check_standalone(*gpu, "rounded", kNaiveWithRoundedInputs, {"ROUND_INPUT(x)=" + round_input}, problems);
    };
    const CheckedCandidate as_read = check("(x)");
    EXPECT_NE(as_read.kernel, nullptr) << as_read.invalid_reason;
    const CheckedCandidate tf32 = check("to_tf32(x)");
    EXPECT_EQ(tf32.kernel, nullptr);
    EXPECT_EQ(tf32.invalid_reason.rfind("wrong result: the scaled errors' root mean square", 0), 0u)
        << tf32.invalid_reason;
}

}  // namespace
