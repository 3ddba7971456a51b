#include "tuner/candidate_check.h"

#include <algorithm>

#include "src/cuda/check.h"

namespace sgemm {
namespace {

// The second check's scalars: exact in fp32, and neither 0 nor 1, so that a kernel that drops
// or misapplies either fails.
constexpr float kScaledAlpha = -1.5f, kScaledBeta = 0.75f;

// Whether the CUDA context is lost: after a device fault every call returns its error.
bool context_lost(cudaStream_t stream) { return cudaStreamSynchronize(stream) != cudaSuccess; }

// Runs `step`, which loads or launches; its CUDA error, as a reason, when the context
// survived it. A sticky error (a fault) is thrown on.
template <typename Step>
std::string refusal(Step step, cudaStream_t stream) {
    try {
        step();
        return "";
    } catch (const Error& e) {
        if (context_lost(stream)) throw;
        return e.what();
    }
}

CheckedCandidate check(const Family& family, const CompiledKernel& compiled, GemmProblem& problem,
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
    const ProblemSpec& spec = problem.spec();
    const std::size_t workspace = kernel->workspace_bytes(spec.M, spec.N, spec.K, problem.call_alignment());
    if (std::string why = problem.workspace_does_not_fit(workspace); !why.empty()) return invalid(std::move(why));
    problem.reserve_workspace(workspace);

    // One run on poisoned output, judged; the reason it is invalid, or "".
    const auto run_and_judge = [&](const std::string& when, Accuracy& accuracy) {
        problem.poison_output(stream);
        if (const std::string why = refusal([&] { kernel->launch(problem.args(), stream); }, stream); !why.empty())
            return "does not launch" + when + ": " + why;
        accuracy = problem.check_output();
        return accuracy.ok() ? std::string() : "wrong result" + when + ": " + accuracy.verdict();
    };
    if (std::string why = run_and_judge("", out.accuracy); !why.empty()) return invalid(std::move(why));
    const float alpha = spec.alpha, beta = spec.beta;
    problem.set_scalars(kScaledAlpha, kScaledBeta);
    Accuracy scaled;
    std::string why = run_and_judge(" at alpha -1.5 and beta 0.75", scaled);
    problem.set_scalars(alpha, beta);
    if (!why.empty()) return invalid(std::move(why));
    out.kernel = std::move(kernel);
    return out;
}

}  // namespace

CheckedCandidate check_candidate(const Family& family, const CompiledKernel& compiled, GemmProblem& problem,
                                 cudaStream_t stream) {
    try {
        return check(family, compiled, problem, stream);
    } catch (const Error& e) {
        if (context_lost(stream)) throw DeviceFault(e.what());
        throw;
    }
}

std::vector<Candidate> without_faulted(const std::vector<Candidate>& candidates,
                                       const std::vector<Measurement>& measured) {
    std::vector<const KernelRef*> faulted;
    for (const Measurement& m : measured)
        if (!m.valid && m.invalid_reason.rfind(kFaultedReason, 0) == 0) faulted.push_back(&m.kernel);
    if (faulted.empty()) return candidates;
    std::vector<Candidate> out;
    for (const Candidate& c : candidates) {
        const bool faulted_before = std::any_of(faulted.begin(), faulted.end(), [&](const KernelRef* k) {
            return k->family == c.family->name && k->params == c.values && k->template_hash == templates_hash(*c.family);
        });
        if (!faulted_before) out.push_back(c);
    }
    return out;
}

}  // namespace sgemm
