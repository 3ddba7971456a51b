#include "tuner/candidate_check.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "db/shape_key.h"
#include "src/cuda/check.h"
#include "src/records/kernel_records.h"

namespace sgemm {
namespace {

// The later runs' alpha and beta: exact in fp32, and neither 0 nor 1, so that a kernel that
// drops or misapplies either fails.
constexpr float kScaledAlpha = -1.5f, kScaledBeta = 0.75f;

// Runs `step`, which loads or launches; the CUDA error it met, as a reason, when the GPU
// refused it and the context survived. A fault (a sticky error) is thrown on, and so are
// errors of our own, not the GPU's: they end the run, as a bug should.
template <typename Step>
std::string refusal(Step step, cudaStream_t stream) {
    try {
        step();
        return "";
    } catch (const CudaError& e) {
        if (context_lost(stream)) throw;
        return e.what();
    }
}

// Sets a problem's scalars for a scope: its own come back however the scope ends.
class ScalarsForAScope {
public:
    ScalarsForAScope(GemmProblem& problem, float alpha, float beta)
        : problem_(problem), alpha_(problem.spec().alpha), beta_(problem.spec().beta) {
        problem_.set_scalars(alpha, beta);
    }
    ~ScalarsForAScope() { problem_.set_scalars(alpha_, beta_); }
    ScalarsForAScope(const ScalarsForAScope&) = delete;
    ScalarsForAScope& operator=(const ScalarsForAScope&) = delete;

private:
    GemmProblem& problem_;
    float alpha_, beta_;
};

// Two passing runs' figures, each the larger of the two: what the check found at worst.
Accuracy worse_of(Accuracy a, const Accuracy& b) {
    if (b.max_scaled_err > a.max_scaled_err) {
        a.max_scaled_err = b.max_scaled_err;
        a.worst_row = b.worst_row, a.worst_col = b.worst_col;
    }
    a.max_abs_err = std::max(a.max_abs_err, b.max_abs_err);
    a.rel_err_norm = std::max(a.rel_err_norm, b.rel_err_norm);
    a.rms_scaled_err = std::max(a.rms_scaled_err, b.rms_scaled_err);
    return a;
}

}  // namespace

CheckProblems::CheckProblems(const ProblemSpec& spec, const CublasHandle& cublas, cudaStream_t stream)
    : first(spec, cublas, stream) {
    for (const LeadingDimensions& lds : later_layouts_for(first.spec()))
        later.push_back(std::make_unique<GemmProblem>(first, lds, stream));
}

std::vector<GemmProblem*> CheckProblems::all() {
    std::vector<GemmProblem*> out = {&first};
    for (const std::unique_ptr<GemmProblem>& p : later) out.push_back(p.get());
    return out;
}

CheckedCandidate check_candidate(const Family& family, const CompiledKernel& compiled, CheckProblems& problems,
                                 cudaStream_t stream) {
    CheckedCandidate out;
    const auto invalid = [&](std::string why) {
        out.kernel.reset();
        out.invalid_reason = std::move(why);
        return out;
    };
    if (std::string spill = spills_reason(compiled.ptxas); !spill.empty()) return invalid(std::move(spill));
    std::shared_ptr<LoadedKernel> kernel;
    if (const std::string why = refusal([&] { kernel = std::make_shared<LoadedKernel>(family, compiled); }, stream);
        !why.empty())
        return invalid("does not load: " + why);
    // The workspace depends on the shape and the alignment class, which the layouts share.
    GemmProblem& first = problems.first;
    const ProblemSpec& spec = first.spec();
    const std::size_t workspace = kernel->workspace_bytes(spec.M, spec.N, spec.K, first.call_alignment());
    for (GemmProblem* p : problems.all()) {
        if (std::string why = p->workspace_does_not_fit(workspace); !why.empty()) return invalid(std::move(why));
        p->reserve_workspace(workspace);
    }

    // One run on `on`'s poisoned output at `alpha` and `beta`, judged into `accuracy`; the
    // reason it is invalid, with `when` naming the run, or "".
    const auto run_and_judge = [&](GemmProblem& on, float alpha, float beta, const std::string& when,
                                   Accuracy& accuracy) {
        const ScalarsForAScope scalars(on, alpha, beta);
        on.poison_output(stream);
        if (const std::string why = refusal([&] { kernel->launch(on.args(), stream); }, stream); !why.empty())
            return "does not launch" + when + ": " + why;
        accuracy = on.check_output();
        return accuracy.ok() ? std::string() : "wrong result" + when + ": " + accuracy.verdict();
    };
    if (std::string why = run_and_judge(first, spec.alpha, spec.beta, "", out.accuracy); !why.empty())
        return invalid(std::move(why));
    // The runs at the scaled alpha: beta 0 on the first later layout, then C read on every
    // layout.
    std::vector<std::pair<GemmProblem*, float>> scaled_runs = {{problems.later.front().get(), 0.0f}};
    for (GemmProblem* p : problems.all()) scaled_runs.emplace_back(p, kScaledBeta);
    if (1 + scaled_runs.size() != static_cast<std::size_t>(checked_runs(spec)))
        throw Error("the check's runs are not checked_runs");
    for (const auto& [on, beta] : scaled_runs) {
        const ProblemSpec& other = on->spec();
        char when[160];
        std::snprintf(when, sizeof when, " at alpha %g and beta %g on %s (lda %d, ldb %d, ldc %d)", kScaledAlpha,
                      beta, on == &first ? "the tuner's rows" : "rows laid out anew", other.lda, other.ldb, other.ldc);
        Accuracy later;
        if (std::string why = run_and_judge(*on, kScaledAlpha, beta, when, later); !why.empty())
            return invalid(std::move(why));
        out.accuracy = worse_of(out.accuracy, later);
    }
    out.kernel = std::move(kernel);
    return out;
}

std::vector<LeadingDimensions> later_layouts_for(const ProblemSpec& first) {
    // A, B and C: each row's length, and the alignment (16, 8 or 4 bytes) its start and
    // leading dimension give it in `first`, where all three start offset_floats past 256.
    const std::array<int, 3> row_length = {first.trans_a ? first.M : first.K, first.trans_b ? first.K : first.N, first.N};
    const std::array<int, 3> ld = {first.lda, first.ldb, first.ldc};
    const char* const start = reinterpret_cast<const char*>(256) + 4 * first.offset_floats;
    for (int i = 0; i < 3; ++i)
        if (ld[i] < row_length[i]) throw Error("later_layouts_for takes a layout with its leading dimensions filled in");
    std::array<int, 3> own{};
    for (int i = 0; i < 3; ++i) own[i] = alignment_class(start, ld[i], start, ld[i], start, ld[i]);
    const int call_class = *std::min_element(own.begin(), own.end());
    // Each later layout's alignment of A, B and C: which take 16 bytes (a bit each, A first).
    // Class 16 keeps all three; else the layouts are the other arrangements of as many
    // aligned operands as `first` has, or, where it has none, each of the three with one
    // operand misaligned, C first. A misaligned operand takes the call's class.
    const unsigned in_first = (own[0] == 16) | (own[1] == 16) << 1 | (own[2] == 16) << 2;
    std::vector<unsigned> arrangements;
    if (call_class == 16)
        arrangements = {7u};
    else if (in_first == 0)
        arrangements = {3u, 5u, 6u};
    else
        for (unsigned bits = 1; bits < 7; ++bits)
            if (bits != in_first && __builtin_popcount(bits) == __builtin_popcount(in_first)) arrangements.push_back(bits);
    std::vector<std::array<int, 3>> targets;
    for (const unsigned bits : arrangements)
        targets.push_back({bits & 1u ? 16 : call_class, bits & 2u ? 16 : call_class, bits & 4u ? 16 : call_class});
    // Per layout, the first leading dimension at least 4 floats past each row's end that
    // gives the operand its target at a 256-byte start: a multiple of 4 floats for 16, of 2
    // but not 4 for 8, odd for 4. In 64 bits: it must still fit an int.
    std::vector<LeadingDimensions> out;
    const char* const aligned = reinterpret_cast<const char*>(256);
    for (const std::array<int, 3>& target : targets) {
        std::array<int, 3> lds{};
        for (int i = 0; i < 3; ++i) {
            std::int64_t longer = std::int64_t{row_length[i]} + 4;
            while (alignment_class(aligned, longer, aligned, longer, aligned, longer) != target[i]) ++longer;
            if (longer > std::numeric_limits<int>::max())
                throw Error("rows of " + std::to_string(row_length[i]) + " floats cannot be laid out 4 to 7 floats " +
                            "longer in a 32-bit leading dimension");
            lds[i] = static_cast<int>(longer);
        }
        out.push_back(LeadingDimensions{lds[0], lds[1], lds[2]});
    }
    return out;
}

int checked_runs(const ProblemSpec& first) {
    return 3 + static_cast<int>(later_layouts_for(with_leading_dimensions_filled(first)).size());
}

bool context_lost(cudaStream_t stream) { return cudaStreamSynchronize(stream) != cudaSuccess; }

std::vector<Candidate> without_faulted(const std::vector<Candidate>& candidates,
                                       const std::vector<Measurement>& measured) {
    const std::vector<KernelRef> faulted = kernels_that_faulted(measured);
    // A kernel reference costs a hash of its family's sources: none are made without a fault.
    if (faulted.empty()) return candidates;
    std::vector<Candidate> out;
    for (const Candidate& c : candidates)
        if (std::find(faulted.begin(), faulted.end(), kernel_ref(*c.family, c.values)) == faulted.end())
            out.push_back(c);
    return out;
}

}  // namespace sgemm
