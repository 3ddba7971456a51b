// The search driver: for one shape, choose candidates, build them through the binary
// cache, validate each against the reference, time the valid ones (early rejection of slow
// ones), time cuBLAS in the same run, re-time the two fastest in alternation to pick the
// winner, then the winner and cuBLAS in fresh alternating rounds to judge it, and store
// every measurement as it is taken and the winner at the end.
//
// Shape keys: the tuner tunes a shape at the alignment class its key names (db/shape_key.h)
// and lays out its own operands to give exactly that class (operands_for). A shapes file's
// rows name the class of tightly packed operands (packed_alignment), or the one their align
// column gives; a miss names the class of the calls dispatch met, so padded or offset calls
// get winners of their own class.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"
#include "src/cuda/cublas_handle.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "tuner/accuracy.h"
#include "tuner/device_model.h"
#include "tuner/gemm_problem.h"
#include "tuner/kernel_cache.h"
#include "tuner/search.h"
#include "tuner/shapes_csv.h"
#include "tuner/timing.h"

namespace sgemm {

// The operands the tuner judges `key` on: M, N, K and the transposes of the key, alpha 1 and
// beta 0, and a layout whose alignment class is exactly key.alignment. Where that is the
// class of tightly packed operands, they are packed tightly (most shapes). Otherwise every
// row is padded to a multiple of 4 floats and every operand starts key.alignment bytes past
// a 16-byte boundary (none for class 16): each row then has the class's alignment, as in a
// call on views into larger matrices.
ProblemSpec operands_for(const ShapeKey& key);

struct TuneOptions {
    SearchPlan search;
    std::vector<std::string> families;  // empty: the default set (candidates.h)
    bool retune = false;                // re-tune shapes that already have a winner
    // Try again the candidates that faulted the GPU on a shape in an earlier run, which are
    // otherwise left out (without_faulted in tuner/candidate_check.h), and tune such a shape
    // again though it has a winner: after a fault that was the driver's or the hardware's, say.
    bool retry_faulted = false;
    // The run goes on in a new process after a fault (sgemm-tune), and the first shape of
    // tune_all is the one the fault cut short: it is tuned whatever winner it holds (the
    // search it began stored none, and a --retune must not keep the old one), and always
    // without the candidates that faulted on it, whatever retry_faulted says: the one that
    // just faulted would fault again.
    bool first_shape_cut_short_by_fault = false;
    // With it: the seconds that the search the fault cut short had spent, which count in the
    // shape's budget_seconds and its ShapeOutcome::seconds.
    double first_shape_seconds_spent = 0;
    bool check_fp64 = false;            // validate against an fp64 reference, not cuBLAS
    bool atomics_allowed = false;       // may store split-K kernels that add with float atomics (candidates.h)
    double budget_seconds = 0;          // per shape, compiling and timing candidates; 0: none
    int jobs = 1;                       // compile threads
    // Asked before each shape, each compile and each candidate; once it says yes the run
    // stops there (compiles already in progress finish). Empty: the run goes to the end.
    std::function<bool()> stop_requested;
};

struct ShapeOutcome {
    ShapeRow row;          // its key carries the alignment class it was tuned under
    bool skipped = false;  // it had a winner and --retune was not given
    // It had a winner from a narrowed search (Winner::narrowed_by), and this run, searching
    // in full, tuned it again: what narrowed that search. Empty otherwise.
    std::string earlier_narrowed_by;
    // It had a winner from a search that left atomic kernels out, and this run, which lets
    // them compete (--allow-atomics), tuned it again.
    bool earlier_without_atomics = false;
    // The run was stopped during its search (TuneOptions::stop_requested): what it measured
    // is stored, but no winner (a winner from an earlier run stays as it was).
    bool interrupted = false;
    // A candidate faulted the GPU (an illegal address, a trap): what happened, in words, naming
    // the candidate. The CUDA context is lost, so the search ended there with no winner, and
    // this process's tune ends with this shape (sgemm-tune goes on in a new process). The
    // fault is stored, and later searches of the shape leave the candidate out
    // (without_faulted in tuner/candidate_check.h) unless TuneOptions::retry_faulted.
    std::string fault;
    // Its budget (TuneOptions::budget_seconds) ran out before any candidate ran: cuBLAS was
    // timed, but nothing was compared with it, so no winner is stored and the next run tunes
    // the shape again (with what compiled meanwhile in the cache).
    bool untried = false;
    Winner winner;         // what the database now holds for the shape (nothing when untried)
    // How the winner's output was judged in this run's check (cuBLAS's, where it stayed, only
    // against fp64: else its output is the reference); absent where the shape was skipped or
    // untried.
    std::optional<Accuracy> winner_accuracy;
    int candidates = 0;    // chosen for timing
    // Left out before choosing: they faulted the GPU on this shape in an earlier run
    // (without_faulted in tuner/candidate_check.h), unless TuneOptions::retry_faulted.
    int left_out_faulted = 0;
    int invalid = 0;       // failed to build, spilled, or gave a wrong result
    int rejected = 0;      // dropped early as too slow
    int compiled = 0, cache_hits = 0;
    double seconds = 0;          // wall time spent on the shape
    double compile_seconds = 0;  // the part of it spent waiting for NVRTC
    // After an exhaustive search: the time the default model strategy would have reached on
    // this run's measurements (replay_model_search), against the fastest of all. This is
    // how the model strategy is judged (sgemm-tune prints how often it finds the winner or
    // one within 3% of it).
    double exhaustive_best_ms = 0;
    double model_best_ms = 0;
};

// What a long run reports as it goes (the CLI draws a bar or prints lines from it).
struct TuneProgress {
    std::function<void(const ShapeRow& row, int index, int total, int candidates)> shape_started;
    // stage: "compiling", "timing", "refining" (the model strategy's walks), then "re-timing"
    // (the final alternating rounds, counted in rounds).
    std::function<void(const std::string& stage, int done, int total)> step;
    std::function<void(const ShapeOutcome& outcome)> shape_finished;
};

class Tuner {
public:
    Tuner(TuningStore& store, const DeviceInfo& device, TuneOptions options, TuneProgress progress);

    // Tunes (or skips) every shape in order; results are in the database as soon as each
    // is measured. A stop ends the list: the shape it cut short comes last, marked
    // interrupted, and a stop between shapes leaves the ones not begun out. So does a fault:
    // the shape it cut short comes last, with its fault.
    std::vector<ShapeOutcome> tune_all(const std::vector<ShapeRow>& shapes);
    ShapeOutcome tune(const ShapeRow& row, int index, int total);

private:
    bool stop_requested() const;
    bool over_budget() const;  // the shape being tuned has spent options_.budget_seconds
    std::vector<Candidate> neighbour_winners(const ShapeKey& key, const std::vector<Candidate>& all);

    TuningStore& store_;
    DeviceInfo device_;
    DeviceModel model_;
    std::string device_id_;
    TuneOptions options_;
    TuneProgress progress_;
    KernelCache cache_;
    Stream stream_;
    CublasHandle cublas_;
    CacheFlusher flusher_;
    std::chrono::steady_clock::time_point shape_start_;  // when tune() began the current shape
};

// The misses dispatch recorded (sgemm-tune --from-misses), as a run's shapes, most frequent
// first as given, each weighted and named by its count. Keys of a precision the tuner does
// not tune yet are left out and counted.
struct ShapesOfMisses {
    std::vector<ShapeRow> rows;
    int left_out = 0;
};
ShapesOfMisses shapes_of_misses(const std::vector<Miss>& misses);

// What sgemm-tune --from-misses tunes on `gpu`: the misses recorded under its device id and
// under its earlier builds (earlier_builds_of), shapes the engine ran before an upgrade of
// sgemm, the driver, CUDA or NVRTC, which get winners for this build. One miss per shape key,
// its counts summed; most frequent first, ties in the order met (this build's first).
// `earlier_builds` names each earlier build that added misses, "device 1a2b3c4d (sgemm 0.3.0)".
struct MissesOfGpu {
    std::vector<Miss> misses;
    std::vector<std::string> earlier_builds;
};
MissesOfGpu misses_of_gpu(TuningStore& store, const DeviceFingerprint& gpu);

// What in `options` leaves part of the default search (sgemm-tune without search options)
// out of every shape's search, in words ("--families decode; --top-k 4"): a family list
// without every default family, the random strategy's sample, a smaller top-k. Empty when
// nothing does. (A cap or a budget narrows a shape's search only where it is reached: the
// tuner adds that to the winner's narrowed_by.)
std::string narrowing_of(const TuneOptions& options);

// Whether a run with `options` searches every shape at least as widely as the default
// search: nothing narrows it, and it has no cap or budget that could. Such a run tunes again
// a shape whose winner came from a narrowed search (Winner::narrowed_by).
bool searches_in_full(const TuneOptions& options);

// Whether the search that stored `w` let kernels that add with atomics compete: the tuner
// says so in the winner's provenance ("sgemm-tune 0.4.0, model search, atomics allowed").
bool searched_with_atomics(const Winner& w);

// The winner stored for `key` on `device_id` that a run with `options` keeps, skipping the
// shape (a killed run resumes where it stopped): none with retune; else the one dispatch would
// use, but none whose own kernel faulted the GPU in a later run, none that adds with atomics
// unless atomics are allowed, none from a search without atomics when they are (a run with
// --allow-atomics after one without must search again), none of a shape where any kernel
// faulted when faulted kernels are tried again, and none from a narrowed search for a run
// that searches in full. Where those last two are the only reasons it keeps none,
// `narrowed_by` gets what narrowed the stored winner's search if it was narrowed, and
// `without_atomics` is set if it left atomics out.
std::optional<Winner> winner_to_keep(TuningStore& store, const std::string& device_id, const ShapeKey& key, Arch arch,
                                     const TuneOptions& options, std::string* narrowed_by = nullptr,
                                     bool* without_atomics = nullptr);

}  // namespace sgemm
