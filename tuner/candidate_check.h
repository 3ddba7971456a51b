// Whether a compiled candidate may be timed: it loads, launches, and computes the right
// answer on the problem's operands at two sets of scalars.
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "db/records.h"
#include "src/jit/loaded_kernel.h"
#include "tuner/accuracy.h"
#include "tuner/candidates.h"
#include "tuner/gemm_problem.h"

namespace sgemm {

struct CheckedCandidate {
    std::shared_ptr<LoadedKernel> kernel;  // loaded and right; null when the candidate is invalid
    std::string invalid_reason;            // why it is invalid, for the database; empty when it is not
    // Of a candidate that passed: its runs' figures, each the larger of the two (both runs
    // have the same tolerances). Of one that failed: the first run's, when it was judged.
    Accuracy accuracy;
};

// Loads `compiled` (a configuration of `family`), reserves the workspace it declares in
// `problem` and `longer_rows` (the same problem on longer rows, GemmProblem's second
// constructor), and judges two runs on poisoned output: one on `problem` at its alpha and
// beta, then one on `longer_rows` at alpha -1.5 and beta 0.75 with C0 in C, since dispatch
// runs a winner at every alpha and beta and every leading dimension of the shape's alignment
// class. Both are left at their own scalars. Invalid, with the reason: ptxas
// spilled, the workspace does not fit the GPU, the cubin does not load, a launch is refused
// (too many threads or registers, too much shared memory), or a result is wrong. A refused
// load or launch leaves the CUDA context usable, so the run goes on to the next candidate;
// a device fault (an illegal address, a trap) does not: its error is thrown, and
// context_lost says which it was.
CheckedCandidate check_candidate(const Family& family, const CompiledKernel& compiled, GemmProblem& problem,
                                 GemmProblem& longer_rows, cudaStream_t stream);
// How many times check_candidate launches a candidate that passes: the tests' kernel that
// faults only once checked (tests/tuner/faulting_kernel.h) counts on it.
constexpr int kCheckedRuns = 2;

// Whether the CUDA context is lost, as after a device fault: every call then returns the
// fault's error (cudaStreamSynchronize on `stream` is the call asked), and nothing more can
// run in this process.
bool context_lost(cudaStream_t stream);

// `candidates` less those that faulted the device on this shape in an earlier run
// (kernels_that_faulted, db/records.h): each would end this run too, and every run after it.
// A kernel built from other templates or by another version, after a fix, is tried again.
std::vector<Candidate> without_faulted(const std::vector<Candidate>& candidates,
                                       const std::vector<Measurement>& measured);

}  // namespace sgemm
