// The report a tune's child process hands its parent (tuner/tune_report.h): every field comes
// back as it went, and bytes cut short or with more after them are refused.
#include <gtest/gtest.h>

#include "src/util/error.h"
#include "tuner/tune_report.h"

using namespace sgemm;

namespace {

// Each field a value of its own, none the default, so that a field dropped or carried into
// another shows.
ShapeOutcome sample_outcome(int seed, bool judged) {
    ShapeOutcome o;
    o.row.key = ShapeKey{seed + 1, seed + 4097, seed + 14335, true, false, GemmPrecision::tf32, 8};
    o.row.weight = 2.5 + seed;
    o.row.name = "down \"proj\"\n" + std::to_string(seed);
    o.row.line = 40 + seed;
    o.skipped = seed % 2 == 0;
    o.earlier_narrowed_by = "--families decode";
    o.earlier_without_atomics = seed % 2 == 1;
    o.interrupted = seed % 3 == 0;
    o.fault = "naive BLOCK_X=32 faulted the GPU";
    o.untried = seed % 2 == 1;
    Winner& w = o.winner;
    w.device_id = "1d1bb541";
    w.shape = o.row.key;
    w.shape.M += 1;
    w.kernel.family = "warptile";
    w.kernel.params = {128, 256, 8, seed, -3};
    w.kernel.description = "warptile BM=128 BN=256";
    w.kernel.template_hash = "abc123";
    w.binary_key = std::string("key\0with a zero", 15);
    w.ms = 0.0275, w.cublas_ms = 0.0457, w.tolerance = 3.1e-6;
    w.provenance = "sgemm-tune 0.1.0, model-guided";
    w.narrowed_by = "--max-candidates 20, reached";
    w.tuned_at = "2026-12-04T13:00:00Z";
    w.speedup = 1.66, w.tflops = 12.5;
    if (judged) {
        Accuracy a;
        a.max_abs_err = 1e-5, a.rel_err_norm = 2e-7, a.max_scaled_err = 3e-7, a.tolerance = 4e-6;
        a.rms_scaled_err = 5e-8, a.rms_tolerance = 6e-7;
        a.nonfinite = 7, a.reference_nonfinite = 8, a.worst_row = 9, a.worst_col = 10, a.outside_writes = 11;
        a.first_outside = "row 3, column 4097";
        a.workspace_declared = std::size_t{1} << 40, a.workspace_overrun = 13, a.counters_left = 14;
        o.winner_accuracy = a;
    }
    o.candidates = 21, o.left_out_faulted = 22, o.invalid = 23, o.rejected = 24, o.compiled = 25, o.cache_hits = 26;
    o.seconds = 27.5, o.compile_seconds = 28.5, o.exhaustive_best_ms = 0.029, o.model_best_ms = 0.030;
    return o;
}

TuneReport sample_report() {
    TuneReport r;
    r.device.ordinal = 1;
    r.device.name = "NVIDIA H200";
    r.device.cc_major = 9, r.device.cc_minor = 0, r.device.sm_count = 132;
    r.device.global_memory_bytes = 150ull << 30, r.device.l2_bytes = 60ull << 20;
    r.device.driver_version = 13000, r.device.runtime_version = 12080;
    r.database = "/home/u/.local/share/sgemm/tuning.db";
    r.shapes_source = "examples/decode.csv";
    r.outcomes = {sample_outcome(1, true), sample_outcome(2, false), sample_outcome(3, true)};
    for (const ShapeOutcome& o : r.outcomes) r.rows.push_back(o.row);
    r.seconds = 61.25;
    r.peak_flops = 66.9e12, r.bytes_per_s = 4.29e12;
    r.signal = 15;
    return r;
}

void expect_same(const ShapeRow& a, const ShapeRow& b) {
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.weight, b.weight);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.line, b.line);
}

void expect_same(const ShapeOutcome& a, const ShapeOutcome& b) {
    expect_same(a.row, b.row);
    EXPECT_EQ(a.skipped, b.skipped);
    EXPECT_EQ(a.earlier_narrowed_by, b.earlier_narrowed_by);
    EXPECT_EQ(a.earlier_without_atomics, b.earlier_without_atomics);
    EXPECT_EQ(a.interrupted, b.interrupted);
    EXPECT_EQ(a.fault, b.fault);
    EXPECT_EQ(a.untried, b.untried);
    const Winner &w = a.winner, &v = b.winner;
    EXPECT_EQ(w.device_id, v.device_id);
    EXPECT_EQ(w.shape, v.shape);
    EXPECT_TRUE(w.kernel == v.kernel);
    EXPECT_EQ(w.kernel.description, v.kernel.description);
    EXPECT_EQ(w.binary_key, v.binary_key);
    EXPECT_EQ(w.ms, v.ms);
    EXPECT_EQ(w.cublas_ms, v.cublas_ms);
    EXPECT_EQ(w.tolerance, v.tolerance);
    EXPECT_EQ(w.provenance, v.provenance);
    EXPECT_EQ(w.narrowed_by, v.narrowed_by);
    EXPECT_EQ(w.tuned_at, v.tuned_at);
    EXPECT_EQ(w.speedup, v.speedup);
    EXPECT_EQ(w.tflops, v.tflops);
    ASSERT_EQ(a.winner_accuracy.has_value(), b.winner_accuracy.has_value());
    if (a.winner_accuracy) {
        const Accuracy &x = *a.winner_accuracy, &y = *b.winner_accuracy;
        EXPECT_EQ(x.max_abs_err, y.max_abs_err);
        EXPECT_EQ(x.rel_err_norm, y.rel_err_norm);
        EXPECT_EQ(x.max_scaled_err, y.max_scaled_err);
        EXPECT_EQ(x.tolerance, y.tolerance);
        EXPECT_EQ(x.rms_scaled_err, y.rms_scaled_err);
        EXPECT_EQ(x.rms_tolerance, y.rms_tolerance);
        EXPECT_EQ(x.nonfinite, y.nonfinite);
        EXPECT_EQ(x.reference_nonfinite, y.reference_nonfinite);
        EXPECT_EQ(x.worst_row, y.worst_row);
        EXPECT_EQ(x.worst_col, y.worst_col);
        EXPECT_EQ(x.outside_writes, y.outside_writes);
        EXPECT_EQ(x.first_outside, y.first_outside);
        EXPECT_EQ(x.workspace_declared, y.workspace_declared);
        EXPECT_EQ(x.workspace_overrun, y.workspace_overrun);
        EXPECT_EQ(x.counters_left, y.counters_left);
    }
    EXPECT_EQ(a.candidates, b.candidates);
    EXPECT_EQ(a.left_out_faulted, b.left_out_faulted);
    EXPECT_EQ(a.invalid, b.invalid);
    EXPECT_EQ(a.rejected, b.rejected);
    EXPECT_EQ(a.compiled, b.compiled);
    EXPECT_EQ(a.cache_hits, b.cache_hits);
    EXPECT_EQ(a.seconds, b.seconds);
    EXPECT_EQ(a.compile_seconds, b.compile_seconds);
    EXPECT_EQ(a.exhaustive_best_ms, b.exhaustive_best_ms);
    EXPECT_EQ(a.model_best_ms, b.model_best_ms);
}

}  // namespace

TEST(TuneReport, EveryFieldComesBackAsItWent) {
    const TuneReport sent = sample_report();
    const TuneReport got = decode_tune_report(encode_tune_report(sent));
    const DeviceInfo &d = sent.device, &e = got.device;
    EXPECT_EQ(d.ordinal, e.ordinal);
    EXPECT_EQ(d.name, e.name);
    EXPECT_EQ(d.cc_major, e.cc_major);
    EXPECT_EQ(d.cc_minor, e.cc_minor);
    EXPECT_EQ(d.sm_count, e.sm_count);
    EXPECT_EQ(d.global_memory_bytes, e.global_memory_bytes);
    EXPECT_EQ(d.l2_bytes, e.l2_bytes);
    EXPECT_EQ(d.driver_version, e.driver_version);
    EXPECT_EQ(d.runtime_version, e.runtime_version);
    EXPECT_EQ(sent.database, got.database);
    EXPECT_EQ(sent.shapes_source, got.shapes_source);
    EXPECT_EQ(sent.seconds, got.seconds);
    EXPECT_EQ(sent.peak_flops, got.peak_flops);
    EXPECT_EQ(sent.bytes_per_s, got.bytes_per_s);
    EXPECT_EQ(sent.signal, got.signal);
    ASSERT_EQ(sent.rows.size(), got.rows.size());
    for (std::size_t i = 0; i < sent.rows.size(); ++i) expect_same(sent.rows[i], got.rows[i]);
    ASSERT_EQ(sent.outcomes.size(), got.outcomes.size());
    for (std::size_t i = 0; i < sent.outcomes.size(); ++i) {
        SCOPED_TRACE("outcome " + std::to_string(i));
        expect_same(sent.outcomes[i], got.outcomes[i]);
    }
}

TEST(TuneReport, AnEmptyReportComesBackEmpty) {
    const TuneReport got = decode_tune_report(encode_tune_report(TuneReport{}));
    EXPECT_TRUE(got.rows.empty());
    EXPECT_TRUE(got.outcomes.empty());
    EXPECT_TRUE(got.database.empty());
}

// A child that dies while writing leaves a report cut short: never read as a shorter one.
TEST(TuneReport, BytesCutShortOrWithMoreAfterThemAreRefused) {
    const std::string bytes = encode_tune_report(sample_report());
    for (std::size_t size = 0; size < bytes.size(); ++size)
        EXPECT_THROW(decode_tune_report(bytes.substr(0, size)), Error) << "cut to " << size << " of " << bytes.size();
    EXPECT_THROW(decode_tune_report(bytes + '\0'), Error);
    EXPECT_THROW(decode_tune_report("not a report"), Error);
}
