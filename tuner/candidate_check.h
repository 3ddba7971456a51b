// Whether a compiled candidate may be timed: it loads, launches, and computes the right
// answer on the problem's operands at three sets of scalars and two layouts.
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
    // Of a candidate that passed: its runs' figures, each the largest of the three (the runs
    // have the same tolerances). Of one that failed: the first run's, when it was judged.
    Accuracy accuracy;
};

// Loads `compiled` (a configuration of `family`), reserves the workspace it declares in
// `problem` and `other_layout` (the same problem laid out as other_layout_for says,
// GemmProblem's second constructor), and judges three runs on poisoned output, since
// dispatch runs a winner at every alpha and beta and every layout of the shape's alignment
// class:
//   1. on `problem` at its alpha and beta, the scalars it is timed at;
//   2. on `other_layout` at alpha -1.5 and beta 0 (NaN in C, which must not be read);
//   3. on `other_layout` at alpha -1.5 and beta 0.75, with C0 in C.
// Both problems are left at their own scalars. Invalid, with the reason: ptxas spilled, the
// workspace does not fit the GPU, the cubin does not load, a launch is refused (too many
// threads or registers, too much shared memory), or a result is wrong. A refused load or
// launch leaves the CUDA context usable, so the run goes on to the next candidate; a device
// fault (an illegal address, a trap) does not: its error is thrown, and context_lost says
// which it was.
CheckedCandidate check_candidate(const Family& family, const CompiledKernel& compiled, GemmProblem& problem,
                                 GemmProblem& other_layout, cudaStream_t stream);
// How many times check_candidate launches a candidate that passes: the tests' kernel that
// faults only once checked (tests/tuner/faulting_kernel.h) counts on it.
constexpr int kCheckedRuns = 3;

// The leading dimensions of the check's later runs, for a problem laid out as `first` (its
// leading dimensions filled in; its operands start offset_floats past 256 bytes, theirs at
// 256 bytes). Every row is 4 to 7 floats longer than it is, so a kernel that reads past a
// row's end meets NaN. And each operand's 16-byte alignment is turned over where the call's
// alignment class allows it: kernels choose 16-byte or 4-byte accesses operand by operand,
// and a class-4 winner checked only with A misaligned would still serve calls where B or C
// is. An operand that takes 16-byte accesses in `first` does not here, and one that does not
// does, but in class 8 or 4 some operand must stay below 16 bytes: where none took them in
// `first`, C stays below (A and B then take them). In class 16 nothing can turn. Two layouts
// cannot set every pair of operands apart: two that share their alignment in `first` (A and
// B where all three start misaligned, as in every key tuned at another class than packed
// operands have) share it here too, so a kernel that takes one's alignment for the other's
// is caught only where they differ.
LeadingDimensions other_layout_for(const ProblemSpec& first);

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
