#include "tuner/candidate_check.h"

#include <algorithm>

#include "src/cuda/check.h"
#include "src/records/kernel_records.h"

namespace sgemm {
namespace {

// The second check's scalars: exact in fp32, and neither 0 nor 1, so that a kernel that drops
// or misapplies either fails.
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

CheckedCandidate check_candidate(const Family& family, const CompiledKernel& compiled, GemmProblem& problem,
                                 GemmProblem& longer_rows, cudaStream_t stream) {
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
    // The workspace depends on the shape and the alignment class, which the two share.
    const ProblemSpec& spec = problem.spec();
    const std::size_t workspace = kernel->workspace_bytes(spec.M, spec.N, spec.K, problem.call_alignment());
    for (GemmProblem* p : {&problem, &longer_rows}) {
        if (std::string why = p->workspace_does_not_fit(workspace); !why.empty()) return invalid(std::move(why));
        p->reserve_workspace(workspace);
    }

    // One run on `on`'s poisoned output, judged; the reason it is invalid, or "".
    const auto run_and_judge = [&](GemmProblem& on, const std::string& when, Accuracy& accuracy) {
        on.poison_output(stream);
        if (const std::string why = refusal([&] { kernel->launch(on.args(), stream); }, stream); !why.empty())
            return "does not launch" + when + ": " + why;
        accuracy = on.check_output();
        return accuracy.ok() ? std::string() : "wrong result" + when + ": " + accuracy.verdict();
    };
    static_assert(kCheckedRuns == 2, "the runs below are kCheckedRuns");
    if (std::string why = run_and_judge(problem, "", out.accuracy); !why.empty()) return invalid(std::move(why));
    {
        const ScalarsForAScope scaled_check(longer_rows, kScaledAlpha, kScaledBeta);
        Accuracy scaled;
        const std::string when = " at alpha -1.5 and beta 0.75 on rows " + std::to_string(longer_rows.spec().ldc - spec.ldc) +
                                 " floats longer";
        if (std::string why = run_and_judge(longer_rows, when, scaled); !why.empty()) return invalid(std::move(why));
        out.accuracy = worse_of(out.accuracy, scaled);
    }
    out.kernel = std::move(kernel);
    return out;
}

bool context_lost(cudaStream_t stream) { return cudaStreamSynchronize(stream) != cudaSuccess; }

std::vector<Candidate> without_faulted(const std::vector<Candidate>& candidates,
                                       const std::vector<Measurement>& measured) {
    const std::vector<KernelRef> faulted = kernels_that_faulted(measured);
    // A kernel reference costs a hash of its family's templates: none are made without a fault.
    if (faulted.empty()) return candidates;
    std::vector<Candidate> out;
    for (const Candidate& c : candidates)
        if (std::find(faulted.begin(), faulted.end(), kernel_ref(*c.family, c.values)) == faulted.end())
            out.push_back(c);
    return out;
}

}  // namespace sgemm
