// A tiny tuning run on the GPU: 3 shapes, 2 families, a real database (and a transposed
// shape no family reads). Every shape gets a
// winner, and every winner's stored binary, loaded back from the database, computes the
// right answer on fresh operands.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "src/jit/loaded_kernel.h"
#include "src/records/kernel_records.h"
#include "tests/db/fixture.h"
#include "tests/gpu/gpu_test_env.h"
#include "tests/tuner/faulting_kernel.h"
#include "tuner/candidate_check.h"
#include "tuner/device_model.h"
#include "tuner/gemm_problem.h"
#include "tuner/search.h"
#include "tuner/tuner.h"

using namespace sgemm;

namespace {

// A shapes file's row: keyed by the class of packed operands, as parse_shapes_csv keys it.
ShapeRow row(int M, int N, int K) {
    ShapeRow r;
    r.key.M = M, r.key.N = N, r.key.K = K;
    r.key.alignment = packed_alignment(r.key);
    return r;
}

// The stored winner's binary, loaded back from the database, computes the right answer on
// fresh operands of the key's class, with alpha and beta. Where cuBLAS won, the fastest valid
// kernel measured for the shape is run from its cached binary instead, so that a kernel is
// always checked.
void expect_stored_winner_computes(TuningStore& store, const sgemm::testing::GpuContext& gpu, Winner w) {
    if (w.kernel.is_cublas()) {
        std::optional<Measurement> fastest;
        for (const Measurement& m : store.measurements(w.device_id, w.shape))
            if (m.valid && m.median_ms && !m.kernel.is_cublas() && (!fastest || *m.median_ms < *fastest->median_ms))
                fastest = m;
        ASSERT_TRUE(fastest.has_value()) << "cuBLAS won " << w.shape.to_string() << " and no kernel was measured valid";
        w.kernel = fastest->kernel;
        const Family* measured = family_of(w.kernel);
        ASSERT_NE(measured, nullptr) << w.kernel.description;
        w.binary_key = kernel_cache_key(*measured, w.kernel.params, Arch{gpu.device.sm()});
    }
    const std::optional<Binary> binary = store.find_binary(w.binary_key);
    ASSERT_TRUE(binary.has_value());
    CompiledKernel compiled = from_binary(*binary);
    compiled.values = w.kernel.params;
    const Family* family = family_of(w.kernel);
    ASSERT_NE(family, nullptr);
    const LoadedKernel kernel(*family, compiled);

    ProblemSpec spec = operands_for(w.shape);
    spec.alpha = 0.5f, spec.beta = 2.0f, spec.seed = 4242;
    GemmProblem problem(spec, gpu.cublas, gpu.stream.get());
    const SgemmArgs args = problem.args();
    ASSERT_EQ(alignment_class(args.A, args.lda, args.B, args.ldb, args.C, args.ldc), w.shape.alignment);
    problem.reserve_workspace(kernel.workspace_bytes(spec.M, spec.N, spec.K, problem.call_alignment()));
    problem.poison_output(gpu.stream.get());
    kernel.launch(problem.args(), gpu.stream.get());
    const Accuracy a = problem.check_output();
    EXPECT_TRUE(a.ok()) << w.kernel.description << ": " << a.verdict();
}

// The stop tests' search: the decode family's three candidates the model ranks first.
TuneOptions decode_top_3() {
    TuneOptions options;
    options.families = {"decode"};
    options.search.top_k = 3;
    return options;
}

TEST(Tune, ThreeShapesTwoFamiliesGiveValidWinners) {
    SGEMM_REQUIRE_GPU(gpu);
    sgemm::testing::TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    TuneOptions options;
    options.families = {"decode", "async"};
    options.search.top_k = 3;
    options.jobs = 8;
    // The fourth shape reads B transposed, which decode does (TB=1); the last reads A
    // transposed, which neither family does: cuBLAS must win it.
    ShapeRow b_transposed = row(64, 384, 256), a_transposed = row(64, 384, 256);
    b_transposed.key.trans_b = true;
    a_transposed.key.trans_a = true;
    const std::vector<ShapeRow> shapes = {row(8, 1000, 517), row(1, 4096, 1024), row(200, 384, 256), b_transposed,
                                          a_transposed};
    Tuner tuner(store, gpu->device, options, {});
    const std::vector<ShapeOutcome> outcomes = tuner.tune_all(shapes);
    ASSERT_EQ(outcomes.size(), 5u);
    EXPECT_EQ(outcomes[4].candidates, 0);
    EXPECT_TRUE(outcomes[4].winner.kernel.is_cublas());

    const std::string device_id = fingerprint_of(gpu->device).id();
    for (const ShapeOutcome& o : outcomes) {
        SCOPED_TRACE(o.row.key.to_string());
        EXPECT_FALSE(o.skipped);
        EXPECT_LE(o.compile_seconds, o.seconds);
        if (o.compiled > 0) {
            EXPECT_GT(o.compile_seconds, 0);
        }
        if (!o.row.key.trans_a) {
            EXPECT_GE(o.candidates, 1);
        }
        const std::optional<Winner> w = store.find_winner(device_id, o.row.key);
        ASSERT_TRUE(w.has_value());
        EXPECT_GT(w->cublas_ms, 0);
        EXPECT_LE(w->ms, w->cublas_ms);  // a kernel wins only by beating cuBLAS
        EXPECT_FALSE(store.measurements(device_id, o.row.key).empty());
        if (o.candidates > 0) expect_stored_winner_computes(store, *gpu, *w);  // the last has no kernel to check
    }

    // A second run skips every shape, and compiles nothing.
    const std::vector<ShapeOutcome> again = Tuner(store, gpu->device, options, {}).tune_all(shapes);
    for (const ShapeOutcome& o : again) EXPECT_TRUE(o.skipped) << o.row.key.to_string();
    // Each winner says what narrowed its search, so a run of the default search tunes every
    // shape again.
    for (const ShapeOutcome& o : outcomes)
        EXPECT_EQ(store.find_winner(device_id, o.row.key)->narrowed_by, "--families decode,async; --top-k 3");
    for (const ShapeRow& r : shapes) {
        std::string narrowed_by;
        EXPECT_FALSE(winner_to_keep(store, device_id, r.key, Arch{gpu->device.sm()}, TuneOptions{}, &narrowed_by))
            << r.key.to_string();
        EXPECT_EQ(narrowed_by, "--families decode,async; --top-k 3")
            << "not kept for a reason other than its narrowed search";
    }
}

// A database in a temporary folder, and options that time the decode family's 2 best by
// the cost model; a test adds its own.
struct DecodeTuning {
    DecodeTuning() {
        options.families = {"decode"};
        options.search.top_k = 2;
    }
    ShapeOutcome tune(const sgemm::testing::GpuContext& gpu, const ShapeRow& shape) {
        return Tuner(store, gpu.device, options, {}).tune(shape, 0, 1);
    }
    std::vector<Measurement> measurements(const sgemm::testing::GpuContext& gpu, const ShapeKey& key) {
        return store.measurements(fingerprint_of(gpu.device).id(), key);
    }

    sgemm::testing::TempDir dir;
    TuningStore store{dir.file("tuning.db")};
    TuneOptions options;
};

// --check-fp64: candidates are judged against an fp64 reference, and still pass.
TEST(Tune, ValidatesAgainstAnFp64Reference) {
    SGEMM_REQUIRE_GPU(gpu);
    DecodeTuning t;
    t.options.search.refine_starts = 0;
    t.options.check_fp64 = true;
    const ShapeOutcome o = t.tune(*gpu, row(4, 2048, 1531));
    EXPECT_EQ(o.invalid, 0);
    int valid = 0;
    for (const Measurement& m : t.measurements(*gpu, o.row.key)) {
        valid += m.valid;
        if (m.error_norm) {
            EXPECT_LT(*m.error_norm, tolerance_for_k(1531)) << m.kernel.description;
        }
        // Each timed run keeps the check's scaled errors in units of u: under the bounds it
        // passed, and above zero against fp64, which no fp32 sum of 1531 products matches.
        ASSERT_TRUE(m.max_error_u && m.rms_error_u) << m.kernel.description;
        EXPECT_GT(*m.rms_error_u, 0.0) << m.kernel.description;
        EXPECT_LE(*m.rms_error_u, *m.max_error_u) << m.kernel.description;
        EXPECT_LE(*m.max_error_u * unit_roundoff_fp32(), tolerance_for_k(1531)) << m.kernel.description;
    }
    EXPECT_GE(valid, 3);  // cuBLAS and the two candidates
    // The winner's own check, which sgemm-tune prints.
    ASSERT_TRUE(o.winner_accuracy);
    EXPECT_TRUE(o.winner_accuracy->ok()) << o.winner_accuracy->verdict();
    EXPECT_GT(o.winner_accuracy->max_scaled_err, 0.0);
}

// --allow-atomics shows in the stored winner's provenance, so that a database says which of
// its winners came from runs that let results vary in the last bits, and a later run with
// --allow-atomics knows which to search again.
TEST(Tune, AWinnerSaysWhetherItsRunAllowedAtomics) {
    SGEMM_REQUIRE_GPU(gpu);
    for (bool allowed : {false, true}) {
        DecodeTuning t;
        t.options.search.top_k = 1;
        t.options.search.refine_starts = 0;
        t.options.atomics_allowed = allowed;
        const ShapeOutcome o = t.tune(*gpu, row(8, 1024, 512));
        const std::optional<Winner> w = t.store.find_winner(fingerprint_of(gpu->device).id(), o.row.key);
        ASSERT_TRUE(w.has_value());
        EXPECT_EQ(w->provenance.find("atomics allowed") != std::string::npos, allowed) << w->provenance;
        EXPECT_EQ(searched_with_atomics(*w), allowed) << "as a later run reads it: " << w->provenance;
    }
}

// Against cuBLAS's fp32 output, cuBLAS's own measurement keeps no error figures (it is the
// reference), and every candidate timed keeps them.
TEST(Tune, CublasJudgedAgainstItselfKeepsNoErrorFigures) {
    SGEMM_REQUIRE_GPU(gpu);
    DecodeTuning t;
    t.options.search.refine_starts = 0;
    const ShapeOutcome o = t.tune(*gpu, row(4, 2048, 1531));
    int timed = 0;
    for (const Measurement& m : t.measurements(*gpu, o.row.key)) {
        if (m.kernel.is_cublas()) {
            EXPECT_FALSE(m.max_error_u || m.rms_error_u || m.error_norm);
        } else if (m.valid && m.median_ms) {
            ++timed;
            EXPECT_TRUE(m.max_error_u && m.rms_error_u) << m.kernel.description;
        }
    }
    EXPECT_GE(timed, 1);
    EXPECT_EQ(o.winner_accuracy.has_value(), !o.winner.kernel.is_cublas());
}

// --budget-s: once a shape is over its budget no more candidates are compiled or timed.
// Here the budget is spent before the first compile, so nothing was compared with cuBLAS:
// the shape gets no winner (cuBLAS stored as one would skip the shape in every later run),
// and a later run tunes it again.
TEST(Tune, AShapeOverItsBudgetTimesNoMoreCandidatesAndOneThatRanNoneHasNoWinner) {
    SGEMM_REQUIRE_GPU(gpu);
    DecodeTuning t;
    t.options.budget_seconds = 1e-9;
    const ShapeOutcome o = t.tune(*gpu, row(8, 2048, 1024));
    EXPECT_TRUE(o.untried);
    EXPECT_FALSE(o.interrupted);
    EXPECT_EQ(o.compiled, 0);
    const std::string device_id = fingerprint_of(gpu->device).id();
    EXPECT_FALSE(t.store.find_winner(device_id, o.row.key).has_value());
    const std::vector<Measurement> measured = t.measurements(*gpu, o.row.key);
    ASSERT_EQ(measured.size(), 1u);
    EXPECT_TRUE(measured[0].kernel.is_cublas());
    // Unlike a stop, it does not end the run: the next shape is tuned (here, left untried too).
    const std::vector<ShapeOutcome> both =
        Tuner(t.store, gpu->device, t.options, {}).tune_all({row(8, 2048, 1024), row(8, 4096, 1024)});
    ASSERT_EQ(both.size(), 2u);
    EXPECT_TRUE(both[1].untried);
}

// A budget spent between two candidates: the winner is the fastest of those timed, and it
// says the budget narrowed its search, so a run that searches in full tunes the shape again.
// A budget that is not spent narrows nothing. A first run fills the binary cache, so that
// the budgeted runs reach their first candidate well within the budget; a sleep before the
// second candidate then spends it.
TEST(Tune, ABudgetSpentBetweenTwoCandidatesNarrowsTheWinnersSearch) {
    SGEMM_REQUIRE_GPU(gpu);
    DecodeTuning t;
    t.options.search.refine_starts = 0;  // the model's 2 best alone: the walks would add only time
    const ShapeRow shape = row(8, 2048, 1024);
    t.tune(*gpu, shape);
    t.options.retune = true;
    t.options.budget_seconds = 2;
    TuneProgress progress;
    progress.step = [&](const std::string& stage, int done, int) {
        if (stage == "timing" && done == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2100));
    };
    const ShapeOutcome o = Tuner(t.store, gpu->device, t.options, progress).tune(shape, 0, 1);
    EXPECT_FALSE(o.untried);
    EXPECT_EQ(o.compiled, 0) << "the first run's binaries were not reused";
    const std::string device_id = fingerprint_of(gpu->device).id();
    const std::optional<Winner> w = t.store.find_winner(device_id, shape.key);
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->narrowed_by, "--families decode; --top-k 2; --budget-s 2, spent after 1 candidate");
    std::string narrowed_by;
    EXPECT_FALSE(winner_to_keep(t.store, device_id, shape.key, Arch{gpu->device.sm()}, TuneOptions{}, &narrowed_by));
    EXPECT_EQ(narrowed_by, w->narrowed_by) << "not kept for a reason other than its narrowed search";

    t.options.budget_seconds = 600;
    Tuner(t.store, gpu->device, t.options, progress).tune(shape, 0, 1);
    EXPECT_EQ(t.store.find_winner(device_id, shape.key)->narrowed_by, "--families decode; --top-k 2");
}

// --max-candidates bounds the whole search: the model strategy's walks stop at the cap too.
TEST(Tune, TheCandidateCapHoldsForTheWalks) {
    SGEMM_REQUIRE_GPU(gpu);
    DecodeTuning t;  // the model's 2 best first, then walks
    t.options.search.max_candidates = 3;
    const ShapeOutcome o = t.tune(*gpu, row(8, 2048, 1024));
    EXPECT_EQ(o.candidates, 3);
    EXPECT_EQ(t.measurements(*gpu, o.row.key).size(), 4u);  // cuBLAS and the 3
    // The winner says what narrowed its search, the cap it reached among them.
    EXPECT_EQ(o.winner.narrowed_by, "--families decode; --top-k 2; --max-candidates 3, reached");
}

// A stop (Ctrl-C in sgemm-tune) ends the run at the next candidate: the shapes finished keep
// their winners, the shape it cut short keeps its measurements but gets no winner, and the
// shapes after it are not begun.
TEST(Tune, AStopEndsTheRunAtTheNextCandidate) {
    SGEMM_REQUIRE_GPU(gpu);
    sgemm::testing::TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    TuneOptions options = decode_top_3();
    bool stop = false;
    options.stop_requested = [&] { return stop; };
    int finished = 0;
    TuneProgress progress;
    progress.shape_finished = [&](const ShapeOutcome&) { ++finished; };
    // Asked for just before the second shape's second candidate.
    progress.step = [&](const std::string& stage, int done, int) {
        if (finished == 1 && stage == "timing" && done == 1) stop = true;
    };
    const std::vector<ShapeRow> shapes = {row(8, 2048, 1024), row(4, 2048, 1024), row(2, 2048, 1024)};
    const std::vector<ShapeOutcome> outcomes = Tuner(store, gpu->device, options, progress).tune_all(shapes);

    ASSERT_EQ(outcomes.size(), 2u);
    EXPECT_FALSE(outcomes[0].interrupted);
    EXPECT_TRUE(outcomes[1].interrupted);
    EXPECT_EQ(finished, 1);
    const std::string device_id = fingerprint_of(gpu->device).id();
    EXPECT_TRUE(store.find_winner(device_id, outcomes[0].row.key).has_value());
    EXPECT_FALSE(store.find_winner(device_id, outcomes[1].row.key).has_value());
    // cuBLAS, then the first candidate; the second was not begun.
    EXPECT_EQ(store.measurements(device_id, outcomes[1].row.key).size(), 2u);
    const ShapeKey& third = shapes[2].key;
    EXPECT_TRUE(store.measurements(device_id, third).empty());

    // Stopped before the first shape: nothing is begun.
    stop = true;
    finished = 0;
    EXPECT_TRUE(Tuner(store, gpu->device, options, progress).tune_all({shapes[2]}).empty());
    EXPECT_TRUE(store.measurements(device_id, third).empty());
}

// A stop during the compiles ends the shape there: no operands, no cuBLAS timing, nothing
// stored. One build job, so that the stop after the first compile leaves the rest unbuilt.
TEST(Tune, AStopDuringTheCompilesEndsTheShapeBeforeCublasIsTimed) {
    SGEMM_REQUIRE_GPU(gpu);
    sgemm::testing::TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    TuneOptions options = decode_top_3();
    options.jobs = 1;
    bool stop = false;
    options.stop_requested = [&] { return stop; };
    TuneProgress progress;
    progress.step = [&](const std::string& stage, int, int) {
        if (stage == "compiling") stop = true;
    };
    const std::vector<ShapeOutcome> outcomes =
        Tuner(store, gpu->device, options, progress).tune_all({row(8, 2048, 1024)});

    ASSERT_TRUE(stop) << "no compile ran";
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_TRUE(outcomes[0].interrupted);
    EXPECT_EQ(outcomes[0].compiled, 1);
    EXPECT_GT(outcomes[0].candidates, 1);
    const std::string device_id = fingerprint_of(gpu->device).id();
    EXPECT_TRUE(store.measurements(device_id, outcomes[0].row.key).empty());
    EXPECT_FALSE(store.find_winner(device_id, outcomes[0].row.key).has_value());
}

// A stop that comes while the last candidate of a search is timed (here the cap's last) finds
// the search whole: the shape keeps its winner, and the run stops before the next shape.
TEST(Tune, AStopDuringTheLastCandidateLeavesTheSearchWhole) {
    SGEMM_REQUIRE_GPU(gpu);
    sgemm::testing::TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    TuneOptions options = decode_top_3();
    options.search.max_candidates = 2;
    // The signal lands once the second candidate has begun: the stop says no when asked just
    // before it, and yes from then on.
    bool second_begun = false;
    int asked_since = 0;
    options.stop_requested = [&] { return second_begun && ++asked_since > 1; };
    TuneProgress progress;
    progress.step = [&](const std::string& stage, int done, int) {
        if (stage == "timing" && done == 1) second_begun = true;
    };
    const std::vector<ShapeRow> shapes = {row(8, 2048, 1024), row(4, 2048, 1024)};
    const std::vector<ShapeOutcome> outcomes = Tuner(store, gpu->device, options, progress).tune_all(shapes);

    ASSERT_TRUE(second_begun) << "the search timed fewer than two candidates";
    EXPECT_EQ(asked_since, 2) << "asked once before the second candidate, once before the next shape";
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_FALSE(outcomes[0].interrupted);
    const std::string device_id = fingerprint_of(gpu->device).id();
    EXPECT_TRUE(store.find_winner(device_id, outcomes[0].row.key).has_value());
    EXPECT_EQ(store.measurements(device_id, outcomes[0].row.key).size(), 3u);  // cuBLAS and both candidates
}

// sgemm-tune --from-misses: a miss names the class of the calls dispatch met, and is tuned
// on operands of that class. Padded calls to an odd shape (class 16, where packed operands
// would be of class 4) may get a binary for aligned operands only; calls offset from an
// aligned shape (class 4) never do. Each winner is stored under the miss's own key. An
// aligned binary is timed only where the model picks one, so the odd shape is one whose
// first picks are rated by their loops, where such binaries rate 1% faster (at 100x257x129,
// since the stream-K tail's costs were counted, they are split-K tiles rated by memory
// traffic, and none was among the 3 timed); the test first checks that premise.
TEST(Tune, MissesOfPaddedOrOffsetCallsAreTunedAtTheirClass) {
    SGEMM_REQUIRE_GPU(gpu);
    sgemm::testing::TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    TuneOptions options;
    options.families = {"warptile"};
    options.search.top_k = 2;
    options.search.max_candidates = 3;
    options.jobs = 8;
    ShapeRow padded = row(400, 1025, 129), offset = row(64, 256, 128);
    ASSERT_EQ(padded.key.alignment, 4);
    ASSERT_EQ(offset.key.alignment, 16);
    padded.key.alignment = 16;
    offset.key.alignment = 4;
    const std::vector<Candidate> picks = choose_candidates(
        enumerate_candidates(padded.key, Arch{gpu->device.sm()}, options.families), padded.key, device_model(gpu->device),
        options.search, {});
    ASSERT_TRUE(std::any_of(picks.begin(), picks.end(),
                            [](const Candidate& c) { return c.family->required_alignment(c.values) == 16; }))
        << "the model's picks at " << padded.key.to_string() << " hold no binary for aligned operands: pad another shape";
    const std::vector<ShapeOutcome> outcomes = Tuner(store, gpu->device, options, {}).tune_all({padded, offset});
    ASSERT_EQ(outcomes.size(), 2u);
    EXPECT_EQ(outcomes[0].row.key, padded.key);
    EXPECT_EQ(outcomes[1].row.key, offset.key);

    const std::string device_id = fingerprint_of(gpu->device).id();
    for (const ShapeOutcome& o : outcomes) {
        SCOPED_TRACE(o.row.key.to_string());
        EXPECT_EQ(o.invalid, 0);
        int aligned_only = 0;
        for (const Measurement& m : store.measurements(device_id, o.row.key)) {
            EXPECT_TRUE(m.valid) << m.kernel.description;
            if (const Family* f = family_of(m.kernel)) aligned_only += f->required_alignment(m.kernel.params) == 16;
        }
        // The cost model rates binaries for aligned operands first where a key allows them.
        if (o.row.key.alignment == 16) {
            EXPECT_GE(aligned_only, 1);
        } else {
            EXPECT_EQ(aligned_only, 0);
        }
        const std::optional<Winner> w = store.find_winner(device_id, o.row.key);
        ASSERT_TRUE(w.has_value());
        expect_stored_winner_computes(store, *gpu, *w);
    }
    // Nothing was stored under the keys of packed operands.
    EXPECT_TRUE(store.measurements(device_id, row(400, 1025, 129).key).empty());
    EXPECT_TRUE(store.measurements(device_id, row(64, 256, 128).key).empty());
}

}  // namespace

namespace {

// A split-K workspace larger than the GPU's free memory is a reason the candidate cannot be
// timed, told before any allocation: a failed cudaMalloc used to end the whole tuning run
// (8192 x 128256 x 4096 in 8 slices needs 31 GiB). One that fits, or one already reserved,
// has none.
TEST(Tune, AWorkspaceLargerThanTheFreeMemoryIsAReasonNotAnAbort) {
    SGEMM_REQUIRE_GPU(gpu);
    ProblemSpec spec;
    spec.M = 17, spec.N = 31, spec.K = 7;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    std::size_t free_bytes = 0, total_bytes = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
    const std::string why = problem.workspace_does_not_fit(2 * total_bytes);
    EXPECT_NE(why.find("does not fit the"), std::string::npos) << why;
    EXPECT_EQ(problem.workspace_does_not_fit(1 << 20), "");
    problem.reserve_workspace(1 << 20);
    EXPECT_EQ(problem.workspace_does_not_fit(1 << 20), "");
    EXPECT_EQ(problem.workspace_does_not_fit(0), "");
}


// Every candidate is checked a second time at other scalars (dispatch serves every alpha and
// beta): the problem judges a run at the alpha and beta it is set to, so a kernel that
// drops either fails there.
TEST(Tune, TheProblemJudgesTheScalarsItIsSetTo) {
    SGEMM_REQUIRE_GPU(gpu);
    ProblemSpec spec;
    spec.M = 33, spec.N = 65, spec.K = 129;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    problem.set_scalars(-1.5f, 0.75f);
    const auto judged = [&](float alpha, float beta) {
        problem.poison_output(gpu->stream.get());  // C0 in C: beta is not 0
        SgemmArgs args = problem.args();
        args.alpha = alpha, args.beta = beta;
        gpu->cublas.sgemm(args, gpu->stream.get());
        return problem.check_output();
    };
    const Accuracy right = judged(-1.5f, 0.75f);
    EXPECT_TRUE(right.ok()) << right.verdict();
    EXPECT_FALSE(judged(-1.5f, 0.0f).ok()) << "beta dropped";
    EXPECT_FALSE(judged(1.0f, 0.75f).ok()) << "alpha dropped";
    problem.set_scalars(1.0f, 0.0f);
    EXPECT_TRUE(judged(1.0f, 0.0f).ok());
}

// Before a checked run the workspace past its tile counters is NaN, so a kernel that reads
// a partial it did not write fails there, instead of passing on the last candidate's
// partials for the same operands; the counters stay zero.
TEST(Tune, PoisoningMakesTheWorkspacePastItsCountersNan) {
    SGEMM_REQUIRE_GPU(gpu);
    ProblemSpec spec;
    spec.M = 17, spec.N = 31, spec.K = 7;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    const std::size_t partial_words = 4096;
    problem.reserve_workspace(SGEMM_WORKSPACE_COUNTER_BYTES + partial_words * sizeof(float));
    auto* partials = static_cast<unsigned char*>(problem.args().workspace) + SGEMM_WORKSPACE_COUNTER_BYTES;
    // 0.747: a stale partial. On the problem's stream: a plain cudaMemset runs on the legacy
    // stream, which a non-blocking stream does not wait for, so it could land after the poison.
    ASSERT_EQ(cudaMemsetAsync(partials, 0x3f, partial_words * sizeof(float), gpu->stream.get()), cudaSuccess);
    problem.poison_output(gpu->stream.get());
    ASSERT_EQ(cudaStreamSynchronize(gpu->stream.get()), cudaSuccess);
    std::vector<float> seen(partial_words);
    ASSERT_EQ(cudaMemcpy(seen.data(), partials, partial_words * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(std::count_if(seen.begin(), seen.end(), [](float x) { return !std::isnan(x); }), 0);
    std::vector<std::uint32_t> counters(SGEMM_WORKSPACE_COUNTER_BYTES / 4);
    ASSERT_EQ(cudaMemcpy(counters.data(), problem.args().workspace, SGEMM_WORKSPACE_COUNTER_BYTES,
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    EXPECT_EQ(std::count(counters.begin(), counters.end(), 0u), static_cast<long>(counters.size()));
}

}  // namespace

namespace {

// An exhaustive run judges the model strategy by replaying it on the run's medians: the
// fastest of all is the least of those same medians (it was the winner's re-timed median, a
// time of another kind, which the replay could come out under).
TEST(Tune, AnExhaustiveRunComparesTheReplayWithTheSameMedians) {
    SGEMM_REQUIRE_GPU(gpu);
    sgemm::testing::TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    TuneOptions options;
    options.families = {"naive"};  // 20 candidates at this shape
    options.search.strategy = Strategy::Exhaustive;
    options.jobs = 8;
    const ShapeOutcome o = Tuner(store, gpu->device, options, {}).tune(row(8, 1000, 517), 0, 1);
    ASSERT_GT(o.exhaustive_best_ms, 0);
    double least = 0;
    for (const Measurement& m : store.measurements(fingerprint_of(gpu->device).id(), o.row.key))
        if (m.valid && !m.kernel.is_cublas() && m.median_ms && (least == 0 || *m.median_ms < least)) least = *m.median_ms;
    EXPECT_DOUBLE_EQ(o.exhaustive_best_ms, least);
    EXPECT_GE(o.model_best_ms, o.exhaustive_best_ms);
}

}  // namespace

namespace {

// A candidate that faults the GPU ends the search and the run (the CUDA context is lost), with
// the fault stored against it and named in the outcome, `while_it_was` checked or timed; the
// next run leaves it out and finishes. The fault would spoil the context of every later test,
// so the first run happens in a process of its own: the threadsafe death test runs the calling
// test again in a new process.
void expect_the_fault_stored_and_the_candidate_left_out(const sgemm::testing::GpuContext& gpu,
                                                        sgemm::testing::FaultsOn when,
                                                        const std::string& while_it_was) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    // The child runs the test from its start: it finds the parent's database in the
    // environment, where the parent put it.
    constexpr const char* kDatabaseOfTheParent = "SGEMM_TEST_FAULT_DB";
    std::optional<sgemm::testing::TempDir> dir;
    std::string path;
    KernelRef planted;
    const ShapeRow shape = row(17, 31, 7);
    if (const char* inherited = std::getenv(kDatabaseOfTheParent)) {
        path = inherited;
    } else {
        dir.emplace();
        path = dir->file("tuning.db");
        planted = sgemm::testing::plant_a_kernel_that_faults(path, Arch{gpu.device.sm()}, when,
                                                             checked_runs(operands_for(shape.key)));
        ASSERT_EQ(setenv(kDatabaseOfTheParent, path.c_str(), 1), 0);
    }
    TuneOptions options;
    options.families = {"naive"};
    options.search.strategy = Strategy::Exhaustive;
    EXPECT_EXIT(
        {
            TuningStore store(path);
            const std::vector<ShapeOutcome> outcomes = Tuner(store, gpu.device, options, {}).tune_all({shape, shape});
            std::fprintf(stderr, "%zu outcome(s); fault: %s; interrupted: %d; winner: %s\n", outcomes.size(),
                         outcomes.back().fault.c_str(), outcomes.back().interrupted,
                         store.find_winner(fingerprint_of(gpu.device).id(), shape.key) ? "stored" : "none");
            std::fflush(stderr);
            std::_Exit(0);
        },
        ::testing::ExitedWithCode(0),
        "1 outcome\\(s\\); fault: naive BLOCK_X=32 BLOCK_Y=8 faulted the GPU while it was " + while_it_was +
            " on M=17 N=31 K=7 .*\\(CUDA error: .*\\); interrupted: 0; winner: none");
    unsetenv(kDatabaseOfTheParent);

    TuningStore store(path);
    const std::string device_id = fingerprint_of(gpu.device).id();
    const auto measurements_of_planted = [&] {
        std::vector<Measurement> out;
        for (const Measurement& m : store.measurements(device_id, shape.key))
            if (m.kernel == planted) out.push_back(m);
        return out;
    };
    std::vector<Measurement> faulted = measurements_of_planted();
    ASSERT_EQ(faulted.size(), 1u);
    EXPECT_FALSE(faulted[0].valid);
    EXPECT_EQ(faulted[0].invalid_reason.rfind(kFaultedReason, 0), 0u) << faulted[0].invalid_reason;

    // Should the candidate not be left out, the run below would fault this process's context.
    ASSERT_EQ(without_faulted({Candidate{&find_family("naive"), planted.params}}, store.measurements(device_id, shape.key))
                  .size(),
              0u);
    const ShapeOutcome next = Tuner(store, gpu.device, options, {}).tune(shape, 0, 1);
    EXPECT_EQ(next.fault, "");
    EXPECT_EQ(next.left_out_faulted, 1);
    EXPECT_GE(next.candidates, 1);
    EXPECT_TRUE(store.find_winner(device_id, shape.key).has_value());
    EXPECT_EQ(measurements_of_planted().size(), 1u) << "the faulting candidate ran again";

    // sgemm-tune's new process after the fault tunes the shape it cut short whatever winner
    // that holds, and without the candidate, even where --retry-faulted asked for it.
    options.first_shape_cut_short_by_fault = true;
    const ShapeOutcome again = Tuner(store, gpu.device, options, {}).tune(shape, 0, 1);
    EXPECT_FALSE(again.skipped) << "the shape a fault cut short was skipped for the winner it holds";
    EXPECT_EQ(again.left_out_faulted, 1);
    options.retry_faulted = true;
    const ShapeOutcome retried = Tuner(store, gpu.device, options, {}).tune(shape, 0, 1);
    EXPECT_EQ(retried.fault, "");
    EXPECT_EQ(retried.left_out_faulted, 1);
    EXPECT_EQ(measurements_of_planted().size(), 1u) << "the candidate that faulted ran again";
    // What the search the fault cut short spent counts in the shape's budget: spent already,
    // it leaves the new search no candidate.
    options.budget_seconds = 60;
    options.first_shape_seconds_spent = 61;
    const ShapeOutcome over_budget = Tuner(store, gpu.device, options, {}).tune(shape, 0, 1);
    EXPECT_TRUE(over_budget.untried);
    EXPECT_GE(over_budget.seconds, 61.0);
}

// A fault in the final rounds, where the two fastest are re-timed in alternation, ends the
// search as any other: stored against the candidate that raised it, named, and no winner. Both
// candidates of a search capped at two are planted (either may be the faster); they fault once
// the progress says the re-timing has begun. The binaries hold the address of a flag mapped in
// the process that ran the tune, the death test's child, so no other run may take them.
TEST(TuneDeathTest, ACandidateThatFaultsTheGpuInTheFinalRoundsIsStoredAgainstIt) {
    SGEMM_REQUIRE_GPU(gpu);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    constexpr const char* kDatabaseOfTheParent = "SGEMM_TEST_FAULT_DB";
    std::optional<sgemm::testing::TempDir> dir;
    std::string path;
    if (const char* inherited = std::getenv(kDatabaseOfTheParent)) {
        path = inherited;
    } else {
        dir.emplace();
        path = dir->file("tuning.db");
        ASSERT_EQ(setenv(kDatabaseOfTheParent, path.c_str(), 1), 0);
    }
    const ShapeRow shape = row(17, 31, 7);
    TuneOptions options;
    options.families = {"naive"};
    options.search.strategy = Strategy::Exhaustive;
    options.search.max_candidates = 2;
    EXPECT_EXIT(
        {
            int* flag = nullptr;
            int* device_flag = nullptr;
            if (cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(int), cudaHostAllocMapped) != cudaSuccess ||
                cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flag), flag, 0) != cudaSuccess)
                std::_Exit(3);
            *flag = 0;
            const Family& naive = find_family("naive");
            for (const ParamValues& values : naive.valid_configs(Arch{gpu->device.sm()}))
                sgemm::testing::plant_a_kernel_that_faults(path, Arch{gpu->device.sm()},
                                                           sgemm::testing::FaultsOn::once_released, 0, values,
                                                           device_flag);
            TuneProgress progress;
            progress.step = [&](const std::string& stage, int, int) {
                if (stage == "re-timing") *reinterpret_cast<volatile int*>(flag) = 1;
            };
            TuningStore store(path);
            const ShapeOutcome o = Tuner(store, gpu->device, options, progress).tune(shape, 0, 1);
            std::fprintf(stderr, "fault: %s; winner: %s\n", o.fault.c_str(),
                         store.find_winner(fingerprint_of(gpu->device).id(), shape.key) ? "stored" : "none");
            std::fflush(stderr);
            std::_Exit(0);
        },
        ::testing::ExitedWithCode(0),
        "fault: naive BLOCK_X=[0-9]+ BLOCK_Y=[0-9]+ faulted the GPU while it was re-timed on M=17 N=31 K=7 .*\\(CUDA "
        "error: .*\\); winner: none");
    unsetenv(kDatabaseOfTheParent);

    // The fault is stored against one candidate, and both were timed before it.
    TuningStore store(path);
    int faulted = 0, timed = 0;
    for (const Measurement& m : store.measurements(fingerprint_of(gpu->device).id(), shape.key)) {
        if (m.kernel.is_cublas()) continue;
        if (!m.valid && m.invalid_reason.rfind(kFaultedReason, 0) == 0) ++faulted;
        if (m.valid && m.median_ms) ++timed;
    }
    EXPECT_EQ(faulted, 1);
    EXPECT_EQ(timed, 2);
}

TEST(TuneDeathTest, ACandidateThatFaultsTheGpuIsStoredAndTheNextRunLeavesItOut) {
    SGEMM_REQUIRE_GPU(gpu);
    expect_the_fault_stored_and_the_candidate_left_out(*gpu, sgemm::testing::FaultsOn::first_run, "checked");
}

// Its checked runs right, the candidate passes its check and faults in the timing's runs.
TEST(TuneDeathTest, ACandidateThatFaultsTheGpuOnlyWhileTimedIsStoredAndLeftOutAlike) {
    SGEMM_REQUIRE_GPU(gpu);
    expect_the_fault_stored_and_the_candidate_left_out(*gpu, sgemm::testing::FaultsOn::after_the_check, "timed");
}

}  // namespace
