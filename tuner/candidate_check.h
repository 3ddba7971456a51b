// Whether a compiled candidate may be timed: it loads, launches, and computes the right
// answer on the problem's operands at three sets of scalars and in two to four layouts.
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
    // Of a candidate that passed: its runs' figures, each the largest over every run (four to
    // six: checked_runs; the runs have the same tolerances). Of one that failed: the first
    // run's, when it was judged.
    Accuracy accuracy;
};

// The problem a candidate is checked on: the tuner's layout, on which it is also timed, and
// the same operands laid out anew for the later runs (later_layouts_for; GemmProblem's second
// constructor). Each is left at its own scalars.
struct CheckProblems {
    CheckProblems(const ProblemSpec& spec, const CublasHandle& cublas, cudaStream_t stream);
    GemmProblem first;
    std::vector<std::unique_ptr<GemmProblem>> later;  // later_layouts_for: one to three
    std::vector<GemmProblem*> all();
};

// Loads `compiled` (a configuration of `family`), reserves the workspace it declares in each
// of `problems`, and judges its runs on poisoned output, since dispatch runs a winner at
// every alpha and beta and every layout of the shape's alignment class:
//   1. on `first` at its alpha and beta, the scalars it is timed at;
//   2. on the first later layout at alpha -1.5 and beta 0 (NaN in C, which must not be read);
//   3. on every layout, `first` included, at alpha -1.5 and beta 0.75, with C0 in C: C is
//      read in each, so a kernel that takes another operand's alignment for C's reads meets
//      a layout where the two differ, as its writes do.
// Invalid, with the reason: ptxas spilled, the workspace does not fit the GPU, the cubin does
// not load, a launch is refused (too many threads or registers, too much shared memory), or a
// result is wrong. A refused load or launch leaves the CUDA context usable, so the run goes
// on to the next candidate; a device fault (an illegal address, a trap) does not: its error
// is thrown, and context_lost says which it was.
CheckedCandidate check_candidate(const Family& family, const CompiledKernel& compiled, CheckProblems& problems,
                                 cudaStream_t stream);
// How many times check_candidate launches a candidate that passes on a problem laid out as
// `first` (leading dimensions of 0: tight), as the tests' kernel that faults only once
// checked (tests/tuner/faulting_kernel.h) needs to know: four in class 16, five or six
// below (later_layouts_for).
int checked_runs(const ProblemSpec& first);

// The leading dimensions of the check's later layouts, for a problem laid out as `first` (its
// leading dimensions filled in; its operands start offset_floats past 256 bytes, theirs at
// 256 bytes). Every row is 4 to 7 floats longer than it is, so a kernel that reads past a
// row's end meets NaN. And since kernels choose 16-byte or 4-byte accesses operand by operand,
// which operands take them differs from layout to layout. A kernel that takes operand Y's
// alignment for X's is wrong where Y takes 16-byte accesses and X does not, so for every X
// and Y some layout, `first` or a later one, has that:
//   - In class 16 nothing can turn: one layout, every operand aligned.
//   - Below, some operand must stay below 16 bytes. Where `first` has one or two operands
//     aligned, the later layouts are the two other arrangements of as many aligned operands
//     (A alone aligned in `first`: B alone, then C alone). Where it has none (every key tuned
//     at another class than packed operands have), they are the three arrangements of one
//     operand misaligned, C first. A misaligned operand takes the call's class.
std::vector<LeadingDimensions> later_layouts_for(const ProblemSpec& first);

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
