#include "tuner/candidate_check.h"

#include "src/cuda/check.h"
#include "tuner/candidates.h"

namespace sgemm {
namespace {

// The second check's scalars: exact in fp32, and neither 0 nor 1, so that a kernel that drops
// or misapplies either fails.
constexpr float kScaledAlpha = -1.5f, kScaledBeta = 0.75f;

// Runs `step`, which loads or launches; its CUDA error, as a reason, when the context
// survived it. A sticky error (a fault) is thrown on: nothing more can run in this process.
template <typename Step>
std::string refusal(Step step, cudaStream_t stream) {
    try {
        step();
        return "";
    } catch (const Error& e) {
        if (cudaStreamSynchronize(stream) != cudaSuccess) throw;
        return e.what();
    }
}

}  // namespace

CheckedCandidate check_candidate(const Family& family, const CompiledKernel& compiled, GemmProblem& problem,
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

}  // namespace sgemm
