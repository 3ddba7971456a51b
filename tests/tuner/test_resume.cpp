// A killed tuning run resumes where it stopped: shapes with a winner for this device are
// skipped unless --retune, on a real database file.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/db/fixture.h"
#include "src/families/registry.h"
#include "src/records/kernel_records.h"
#include "templates/sgemm_common.cuh"
#include "tuner/candidate_check.h"
#include "tuner/candidates.h"
#include "tuner/tuner.h"

using namespace sgemm;
using sgemm::testing::TempDir;

namespace {

// A shapes file's row: keyed by the class of packed operands, as parse_shapes_csv keys it.
ShapeRow row(int M, int N, int K, int line) {
    ShapeRow r;
    r.key.M = M, r.key.N = N, r.key.K = K;
    r.key.alignment = packed_alignment(r.key);
    r.line = line;
    return r;
}

// A run's options: plain, or with --retune, --allow-atomics or --retry-faulted.
TuneOptions run_options(bool retune, bool atomics_allowed, bool retry_faulted) {
    TuneOptions options;
    options.retune = retune;
    options.atomics_allowed = atomics_allowed;
    options.retry_faulted = retry_faulted;
    return options;
}

// The rows of `shapes` that a run with `options` tunes: those without a winner it keeps.
std::vector<ShapeRow> shapes_to_tune(TuningStore& store, const std::string& device_id,
                                     const std::vector<ShapeRow>& shapes, const TuneOptions& options) {
    const std::optional<DeviceFingerprint> device = store.find_device(device_id);
    EXPECT_TRUE(device.has_value()) << device_id;
    const Arch arch{device ? device->sm() : 0};
    std::vector<ShapeRow> out;
    for (const ShapeRow& r : shapes)
        if (!winner_to_keep(store, device_id, r.key, arch, options)) out.push_back(r);
    return out;
}

TEST(Resume, ShapesWithAWinnerAreSkippedUnlessRetune) {
    TempDir dir;
    // The last row is a miss of calls whose operands were padded and offset: the first shape at
    // class 8 is a key of its own.
    ShapeRow offset_calls = row(1, 4096, 4096, 5);
    offset_calls.key.alignment = 8;
    const std::vector<ShapeRow> shapes = {row(1, 4096, 4096, 2), row(8, 4096, 4093, 3), row(32, 4096, 4096, 4),
                                          offset_calls};
    std::string device_id;
    {
        // The run that was killed: shape 1 finished (measurements and winner), shape 2 got
        // as far as one measurement.
        TuningStore store(dir.file("tuning.db"));
        device_id = store.add_device(sgemm::testing::h200());
        store.put_binary(sgemm::testing::naive_binary());
        store.record_measurement(sgemm::testing::measurement(device_id, shapes[0].key, 0.03));
        store.put_winner(sgemm::testing::winner(device_id, shapes[0].key, 1.0, nullptr));
        store.record_measurement(sgemm::testing::measurement(device_id, shapes[1].key, 0.05));
    }
    TuningStore store(dir.file("tuning.db"));
    const std::vector<ShapeRow> todo = shapes_to_tune(store, device_id, shapes, run_options(false, false, false));
    ASSERT_EQ(todo.size(), 3u);
    EXPECT_EQ(todo[0].line, 3);
    EXPECT_EQ(todo[1].line, 4);
    EXPECT_EQ(todo[2].line, 5);
    EXPECT_EQ(todo[0].key.alignment, 4);  // K = 4093: rows of A are not 16-byte aligned
    EXPECT_EQ(todo[1].key.alignment, 16);
    EXPECT_EQ(todo[2].key.alignment, 8);  // kept: the class-16 winner does not serve it
    EXPECT_EQ(shapes_to_tune(store, device_id, shapes, run_options(true, false, false)).size(), 4u);
    // Another device has tuned nothing.
    const std::string other = store.add_device(sgemm::testing::h200(1));
    EXPECT_EQ(shapes_to_tune(store, other, shapes, run_options(false, false, false)).size(), 4u);
}

// A winner dispatch leaves out (tuned with other kernel sources under the same library
// version) counts a miss on every call; a run that skipped its shape as tuned would never
// tune those misses away.
TEST(Resume, AWinnerDispatchWouldLeaveOutIsTunedAgain) {
    TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    const std::string device_id = store.add_device(sgemm::testing::h200());
    const std::vector<ShapeRow> shapes = {row(1, 4096, 4096, 2), row(8, 4096, 4096, 3)};
    const Binary current = sgemm::testing::naive_binary();
    Binary stale = current;
    stale.cache_key = "stale";
    stale.kernel.template_hash = "an older template";
    store.put_binary(current);
    store.put_binary(stale);
    store.put_winner(sgemm::testing::winner(device_id, shapes[0].key, 0.03, &current));
    store.put_winner(sgemm::testing::winner(device_id, shapes[1].key, 0.03, &stale));
    const std::vector<ShapeRow> todo = shapes_to_tune(store, device_id, shapes, run_options(false, false, false));
    ASSERT_EQ(todo.size(), 1u);
    EXPECT_EQ(todo[0].line, 3);
}

// A winner that adds split-K's slices with float atomics (stored by a run with
// --allow-atomics) counts as tuned only for a run that allows atomics too: a run without
// the flag tunes its shape again, so that it leaves only kernels that repeat bit for bit.
TEST(Resume, AWinnerThatAddsWithAtomicsIsTunedAgainUnlessAllowed) {
    TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    const std::string device_id = store.add_device(sgemm::testing::h200());
    const std::vector<ShapeRow> shapes = {row(32, 4096, 4096, 2), row(32, 6144, 4096, 3)};
    const Family& warptile = find_family("warptile");
    const ParamValues in_pass = {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 16, 0, 0, 1, 0, SGEMM_SUM_BY_PASS};
    ParamValues by_atomics = in_pass;
    by_atomics[warptile.param_index("SUM_PASS")] = SGEMM_SUM_BY_ATOMICS;
    Binary summed = sgemm::testing::naive_binary(), added = summed;
    summed.kernel = kernel_ref(warptile, in_pass), summed.cache_key = "summed";
    added.kernel = kernel_ref(warptile, by_atomics), added.cache_key = "added";
    store.put_binary(summed);
    store.put_binary(added);
    const auto put_from_a_search_with_atomics = [&](const ShapeKey& key, double ms, const Binary& binary) {
        Winner w = sgemm::testing::winner(device_id, key, ms, &binary);
        w.provenance = "sgemm-tune 0.3.0, model search, atomics allowed";
        store.put_winner(w);
    };
    put_from_a_search_with_atomics(shapes[0].key, 0.03, summed);
    put_from_a_search_with_atomics(shapes[1].key, 0.04, added);
    const std::vector<ShapeRow> todo = shapes_to_tune(store, device_id, shapes, run_options(false, false, false));
    ASSERT_EQ(todo.size(), 1u);
    EXPECT_EQ(todo[0].line, 3);
    EXPECT_TRUE(shapes_to_tune(store, device_id, shapes, run_options(false, true, false)).empty());
}

// The other way round: a winner from a search that left atomics out counts as tuned for a
// run that leaves them out too, but a run with --allow-atomics searches its shape again, as
// it may find faster kernels (the README's second command, after the first, skipped every
// shape). The winner's provenance says which search stored it.
TEST(Resume, AWinnerFromASearchWithoutAtomicsIsTunedAgainWhereTheyAreAllowed) {
    TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    const std::string device_id = store.add_device(sgemm::testing::h200());
    const std::vector<ShapeRow> shapes = {row(32, 4096, 4096, 2), row(32, 6144, 4096, 3)};
    const Binary naive = sgemm::testing::naive_binary();
    store.put_binary(naive);
    Winner without = sgemm::testing::winner(device_id, shapes[0].key, 0.03, &naive);
    without.provenance = "sgemm-tune 0.3.0, model search";
    Winner with = sgemm::testing::winner(device_id, shapes[1].key, 0.04, &naive);
    with.provenance = "sgemm-tune 0.3.0, model search, atomics allowed";
    EXPECT_FALSE(searched_with_atomics(without));
    EXPECT_TRUE(searched_with_atomics(with));
    store.put_winner(without);
    store.put_winner(with);
    EXPECT_TRUE(shapes_to_tune(store, device_id, shapes, run_options(false, false, false)).empty());
    const std::vector<ShapeRow> todo = shapes_to_tune(store, device_id, shapes, run_options(false, true, false));
    ASSERT_EQ(todo.size(), 1u);
    EXPECT_EQ(todo[0].line, 2);
    // The run says why (sgemm-tune prints it): winner_to_keep tells it.
    std::string narrowed_by;
    bool without_atomics = false;
    EXPECT_FALSE(winner_to_keep(store, device_id, shapes[0].key, Arch{90}, run_options(false, true, false),
                                &narrowed_by, &without_atomics));
    EXPECT_TRUE(without_atomics);
    EXPECT_EQ(narrowed_by, "");
    without_atomics = false;
    EXPECT_TRUE(winner_to_keep(store, device_id, shapes[1].key, Arch{90}, run_options(false, true, false),
                               &narrowed_by, &without_atomics));
    EXPECT_FALSE(without_atomics);
    // From a narrowed search too: a run that searches in full with atomics tells both reasons.
    without.narrowed_by = "--families decode";
    store.put_winner(without);
    EXPECT_FALSE(winner_to_keep(store, device_id, shapes[0].key, Arch{90}, run_options(false, true, false),
                                &narrowed_by, &without_atomics));
    EXPECT_TRUE(without_atomics);
    EXPECT_EQ(narrowed_by, "--families decode");
}

// What narrows every shape's search: a family list short of the defaults, the random
// strategy's sample, a top-k below the default. Not a wider search, nor options that only
// may narrow (a cap or a budget, which the tuner notes on a winner where they are reached),
// though a run with one does not search in full.
TEST(Resume, NarrowingOfNamesWhatLeavesPartOfTheDefaultSearchOut) {
    TuneOptions o;
    EXPECT_EQ(narrowing_of(o), "");
    EXPECT_TRUE(searches_in_full(o));
    o.families = {"decode"};
    o.search.top_k = 3;
    EXPECT_EQ(narrowing_of(o), "--families decode; --top-k 3");
    EXPECT_FALSE(searches_in_full(o));
    o.families = default_families();
    o.families.push_back("naive");
    o.search.top_k = 16;
    EXPECT_EQ(narrowing_of(o), "") << "every default family, and a wider top-k";
    o.search.strategy = Strategy::Exhaustive;
    o.search.top_k = 2;
    EXPECT_EQ(narrowing_of(o), "") << "the exhaustive search times every candidate, whatever the top-k";
    o.search.strategy = Strategy::Random;
    EXPECT_EQ(narrowing_of(o), "--strategy random (16 candidates)");
    o = TuneOptions{};
    o.search.max_candidates = 20;
    EXPECT_EQ(narrowing_of(o), "");
    EXPECT_FALSE(searches_in_full(o));
    o = TuneOptions{};
    o.budget_seconds = 60;
    EXPECT_FALSE(searches_in_full(o));
}

// A winner of a narrowed search (a quick pass with --families decode, say) is not final for
// a run that searches in full, which tunes its shape again; a run that does not search in
// full skips it, as it skips a full search's winner, so that a quick pass never undoes a
// full one.
TEST(Resume, AWinnerOfANarrowedSearchIsTunedAgainByAFullRun) {
    TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    const std::string device_id = store.add_device(sgemm::testing::h200());
    const std::vector<ShapeRow> shapes = {row(1, 4096, 4096, 2), row(8, 4096, 4096, 3)};
    Winner quick = sgemm::testing::winner(device_id, shapes[0].key, 1.0, nullptr);
    quick.narrowed_by = "--families decode";
    store.put_winner(quick);
    store.put_winner(sgemm::testing::winner(device_id, shapes[1].key, 1.0, nullptr));
    const std::vector<ShapeRow> todo = shapes_to_tune(store, device_id, shapes, TuneOptions{});
    ASSERT_EQ(todo.size(), 1u);
    EXPECT_EQ(todo[0].line, 2);
    TuneOptions wider;
    wider.search.strategy = Strategy::Exhaustive;
    EXPECT_EQ(shapes_to_tune(store, device_id, shapes, wider).size(), 1u);
    TuneOptions narrow;
    narrow.families = {"decode"};
    EXPECT_TRUE(shapes_to_tune(store, device_id, shapes, narrow).empty());
    TuneOptions capped;
    capped.search.max_candidates = 20;
    EXPECT_TRUE(shapes_to_tune(store, device_id, shapes, capped).empty());
    TuneOptions budgeted;
    budgeted.budget_seconds = 60;
    EXPECT_TRUE(shapes_to_tune(store, device_id, shapes, budgeted).empty());
}

}  // namespace

namespace {

// --from-misses: every fp32 miss becomes a shape weighted by its count, in the order given;
// a tf32 miss, which dispatch records but the tuner cannot tune yet, is left out and counted.
TEST(Resume, MissesBecomeShapesAndOtherPrecisionsAreLeftOut) {
    std::vector<Miss> misses(3);
    misses[0].shape.M = 8, misses[0].shape.N = 4096, misses[0].shape.K = 4096, misses[0].count = 40;
    misses[1].shape = misses[0].shape;
    misses[1].shape.precision = GemmPrecision::tf32;
    misses[1].count = 30;
    // Calls with padded rows: class 16, though packed operands of 3x100x7 would be of class 4.
    misses[2].shape.M = 3, misses[2].shape.N = 100, misses[2].shape.K = 7, misses[2].count = 1;
    const ShapesOfMisses shapes = shapes_of_misses(misses);
    ASSERT_EQ(shapes.rows.size(), 2u);
    EXPECT_EQ(shapes.left_out, 1);
    EXPECT_EQ(shapes.rows[0].key, misses[0].shape);
    EXPECT_EQ(shapes.rows[0].weight, 40.0);
    EXPECT_EQ(shapes.rows[0].name, "40 misses");
    EXPECT_EQ(shapes.rows[1].key, misses[2].shape);
    EXPECT_EQ(shapes.rows[1].key.alignment, 16);
    EXPECT_EQ(shapes.rows[1].name, "1 miss");
}

// --from-misses on a GPU whose earlier build recorded misses (before an upgrade of sgemm or
// the driver): those are tuned too, for this build, summed with this build's misses of the
// same key and ordered by the sum; a newer build's misses and another GPU's are not.
TEST(Resume, MissesOfEarlierBuildsOfTheGpuAreTunedWithItsOwn) {
    TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    const DeviceFingerprint gpu = sgemm::testing::h200();
    const std::string id = store.add_device(gpu);
    DeviceFingerprint older = gpu;
    older.library_version = "0.3.0";
    const std::string older_id = store.add_device(older);
    DeviceFingerprint newer = gpu;
    newer.library_version = "9.0.0";
    const std::string newer_id = store.add_device(newer);
    DeviceFingerprint other_gpu = older;
    other_gpu.gpu_name = "NVIDIA H100 80GB HBM3";
    const std::string other_gpu_id = store.add_device(other_gpu);
    const ShapeKey shared = row(8, 4096, 4096, 1).key, own = row(1, 4096, 4096, 2).key,
                   old_only = row(32, 4096, 14336, 3).key, elsewhere = row(2, 4096, 4096, 4).key;
    store.record_misses({Miss{id, shared, 3, "", "", ""}, Miss{id, own, 4, "", "", ""}}, "engine 0.4.0");
    store.record_misses({Miss{older_id, shared, 2, "", "", ""}, Miss{older_id, old_only, 1, "", "", ""}}, "engine 0.3.0");
    store.record_misses({Miss{newer_id, elsewhere, 9, "", "", ""}}, "engine 9.0.0");
    store.record_misses({Miss{other_gpu_id, elsewhere, 9, "", "", ""}}, "engine on the H100");

    const MissesOfGpu found = misses_of_gpu(store, gpu);
    ASSERT_EQ(found.misses.size(), 3u);
    EXPECT_EQ(found.misses[0].shape, shared);
    EXPECT_EQ(found.misses[0].count, 5);
    EXPECT_EQ(found.misses[1].shape, own);
    EXPECT_EQ(found.misses[2].shape, old_only);
    for (const Miss& m : found.misses) EXPECT_EQ(m.device_id, id) << "tuned for this build";
    ASSERT_EQ(found.earlier_builds.size(), 1u);
    EXPECT_EQ(found.earlier_builds[0], "device " + older_id.substr(0, 8) + " (sgemm 0.3.0)");
    // An earlier build that recorded no misses is not named.
    DeviceFingerprint quiet = gpu;
    quiet.library_version = "0.2.0";
    store.add_device(quiet);
    EXPECT_EQ(misses_of_gpu(store, gpu).earlier_builds.size(), 1u);
}

}  // namespace

namespace {

// A candidate whose run faulted the GPU ended that run with the fault stored against it
// (tests/gpu/test_tune.cpp runs one): the next run leaves it out, from what it reads back
// from the database, rather than end the same way. A wrong result does not leave a candidate
// out, nor does a fault of the same kernel built from other sources (after a fix).
TEST(Resume, ACandidateThatFaultedTheGpuIsLeftOutOfTheNextRun) {
    TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    const std::string device_id = store.add_device(sgemm::testing::h200());
    const ShapeKey key = row(17, 31, 7, 2).key;
    const std::vector<Candidate> all = enumerate_candidates(key, Arch{90}, {"naive"});
    ASSERT_GE(all.size(), 4u);
    const auto invalid = [&](const Candidate& c, const std::string& why) {
        Measurement m;
        m.device_id = device_id;
        m.shape = key;
        m.kernel = kernel_ref(*c.family, c.values);
        m.valid = false;
        m.invalid_reason = why;
        return m;
    };
    store.record_measurement(
        invalid(all[1], kFaultedReason + std::string("CUDA error: cudaErrorLaunchFailure: unspecified launch failure")));
    store.record_measurement(invalid(all[2], "wrong result: 3 elements are NaN or Inf, e.g. C[16][0]"));
    Measurement other_templates = invalid(all[0], kFaultedReason + std::string("CUDA error: cudaErrorIllegalAddress"));
    other_templates.kernel.template_hash = "the templates before a fix";
    store.record_measurement(other_templates);
    Measurement other_version = invalid(all[3], kFaultedReason + std::string("CUDA error: cudaErrorIllegalAddress"));
    other_version.tuner_version = "0.2.0";
    store.record_measurement(other_version);

    const std::vector<Candidate> left = without_faulted(all, store.measurements(device_id, key));
    ASSERT_EQ(left.size(), all.size() - 1);
    EXPECT_EQ(std::count(left.begin(), left.end(), all[1]), 0);
    EXPECT_EQ(std::count(left.begin(), left.end(), all[0]), 1);
    EXPECT_EQ(std::count(left.begin(), left.end(), all[2]), 1);
    EXPECT_EQ(std::count(left.begin(), left.end(), all[3]), 1);
    // On another shape nothing faulted.
    EXPECT_EQ(without_faulted(all, store.measurements(device_id, row(18, 31, 7, 3).key)).size(), all.size());
}

// A winner whose kernel faulted the GPU in a later run (--retune, whose search then stored no
// winner) is no winner: the next run tunes the shape again, without it.
TEST(Resume, AWinnerThatFaultedInALaterRunIsTunedAgain) {
    TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    const std::string device_id = store.add_device(sgemm::testing::h200());
    const std::vector<ShapeRow> shapes = {row(1, 4096, 4096, 2)};
    const Binary binary = sgemm::testing::naive_binary();
    store.put_binary(binary);
    store.put_winner(sgemm::testing::winner(device_id, shapes[0].key, 1.0, &binary));
    ASSERT_TRUE(shapes_to_tune(store, device_id, shapes, run_options(false, false, false)).empty());
    Measurement fault = sgemm::testing::measurement(device_id, shapes[0].key, 0.03);  // the winner's kernel
    fault.valid = false;
    fault.invalid_reason = kFaultedReason + std::string("CUDA error: cudaErrorIllegalAddress");
    store.record_measurement(fault);
    EXPECT_EQ(shapes_to_tune(store, device_id, shapes, run_options(false, false, false)).size(), 1u);
}

// A kernel tried again after its fault (--retry-faulted) and measured valid is sound again:
// its winner stands, the next run does not leave it out, and a fault after that counts anew.
TEST(Resume, AKernelMeasuredValidAfterItsFaultCountsAsFaultedNoMore) {
    TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    const std::string device_id = store.add_device(sgemm::testing::h200());
    const std::vector<ShapeRow> shapes = {row(1, 4096, 4096, 2)};
    const ShapeKey& key = shapes[0].key;
    const Binary binary = sgemm::testing::naive_binary();
    store.put_binary(binary);
    store.put_winner(sgemm::testing::winner(device_id, key, 1.0, &binary));
    const auto record = [&](bool valid, const std::string& at) {
        Measurement m = sgemm::testing::measurement(device_id, key, 0.03);  // the winner's kernel
        m.valid = valid;
        if (!valid) m.invalid_reason = kFaultedReason + std::string("CUDA error: cudaErrorIllegalAddress");
        m.measured_at = at;
        store.record_measurement(m);
    };
    const Candidate winners_candidate{&find_family("naive"), binary.kernel.params};
    record(true, "2026-12-02T10:00:00.000Z");
    record(false, "2026-12-02T10:00:00.000Z");  // faulted in the re-timing, within the millisecond
    EXPECT_TRUE(faulted_in(binary.kernel, store.measurements(device_id, key)));
    EXPECT_EQ(shapes_to_tune(store, device_id, shapes, run_options(false, false, false)).size(), 1u);

    record(true, "2026-12-02T11:00:00.000Z");  // tried again, and sound
    EXPECT_FALSE(faulted_in(binary.kernel, store.measurements(device_id, key)));
    EXPECT_TRUE(kernels_that_faulted(store.measurements(device_id, key)).empty());
    EXPECT_TRUE(shapes_to_tune(store, device_id, shapes, run_options(false, false, false)).empty());
    EXPECT_TRUE(shapes_to_tune(store, device_id, shapes, run_options(false, false, true)).empty()) << "nothing left to retry";
    EXPECT_EQ(without_faulted({winners_candidate}, store.measurements(device_id, key)).size(), 1u);

    record(false, "2026-12-02T12:00:00.000Z");
    EXPECT_TRUE(faulted_in(binary.kernel, store.measurements(device_id, key)));
    EXPECT_EQ(without_faulted({winners_candidate}, store.measurements(device_id, key)).size(), 0u);
}

// With retry_faulted, a shape where any kernel faulted is tuned again though its winner is
// another kernel, so that the run tries the one that faulted; without it the winner stands.
TEST(Resume, RetryFaultedTunesAgainAShapeWhereAKernelFaulted) {
    TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    const std::string device_id = store.add_device(sgemm::testing::h200());
    const std::vector<ShapeRow> shapes = {row(1, 4096, 4096, 2), row(8, 4096, 4096, 2)};
    const Binary binary = sgemm::testing::naive_binary();
    store.put_binary(binary);
    for (const ShapeRow& r : shapes) store.put_winner(sgemm::testing::winner(device_id, r.key, 1.0, &binary));
    Measurement fault = sgemm::testing::measurement(device_id, shapes[1].key, 0.03);
    fault.kernel.params[0] = 16;  // another naive configuration than the winner's
    fault.valid = false;
    fault.invalid_reason = kFaultedReason + std::string("CUDA error: cudaErrorLaunchFailure");
    store.record_measurement(fault);

    EXPECT_TRUE(shapes_to_tune(store, device_id, shapes, run_options(false, false, false)).empty());
    const std::vector<ShapeRow> todo = shapes_to_tune(store, device_id, shapes, run_options(false, false, true));
    ASSERT_EQ(todo.size(), 1u);
    EXPECT_EQ(todo[0].key, shapes[1].key);
}

}  // namespace
