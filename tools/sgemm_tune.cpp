// sgemm-tune: find, for every shape of a CSV, the fastest correct kernel on this GPU, and
// store it in the tuning database for libsgemm_dispatch.
#include <boost/program_options.hpp>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <iterator>
#include <optional>
#include <tuple>

#include "db/csv.h"
#include "db/default_path.h"
#include "db/schema.h"
#include "src/cuda/device.h"
#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "src/records/kernel_records.h"
#include "src/util/json.h"
#include "src/util/text.h"
#include "tools/cli_child_process.h"
#include "tools/cli_interrupt.h"
#include "tools/cli_lists.h"
#include "tools/cli_output.h"
#include "tools/cli_database_path.h"
#include "tools/cli_input.h"
#include "tools/cli_parse.h"
#include "tools/cli_progress.h"
#include "tuner/batch_cost.h"
#include "tuner/cost_model.h"
#include "tuner/decode/gpu_spec.h"
#include "tuner/kernel_cache.h"
#include "src/util/parallel_for.h"
#include "tuner/tune_report.h"
#include "tuner/tuner.h"

namespace po = boost::program_options;
using namespace sgemm;

namespace {

// The exit status of a tune whose --budget-s left shapes without a winner: the run did part of
// its work, as sgemm-bench's and sgemm-db's 3 say of theirs, and a script should know.
constexpr int kSomeShapesUntried = 3;

// Progress: a bar redrawn in place on a terminal; elsewhere a line per shape, and within a
// shape's search a line every 30 s (SteadyLines).
class ProgressPrinter {
public:
    // `finished_before`: the shapes earlier processes of the run finished (a fault's new one
    // goes on from there), which the counts and the ETA go on from.
    ProgressPrinter(int shapes, const std::vector<ShapeOutcome>& finished_before)
        : tty_(isatty(STDERR_FILENO)), shapes_(shapes), first_(static_cast<int>(finished_before.size())),
          finished_(first_) {
        for (const ShapeOutcome& o : finished_before)
            if (!o.skipped) ++tuned_, tuned_seconds_ += o.seconds;
    }

    TuneProgress callbacks() {
        TuneProgress p;
        p.shape_started = [this](const ShapeRow& row, int index, int total, int candidates) {
            index_ = first_ + index;
            label_ = row.key.to_string() + (row.name.empty() ? "" : " (" + printable(row.name) + ")");
            candidates_ = candidates;
            (void)total;
            lines_.restart(SteadyLines::Clock::now());
        };
        p.step = [this](const std::string& stage, int done, int total) {
            if (tty_)
                std::fprintf(stderr, "\r\033[K[%d/%d] %s  %s %d/%d  ETA %s", index_ + 1, shapes_, label_.c_str(),
                             stage.c_str(), done, total, eta().c_str());
            else if (lines_.due(SteadyLines::Clock::now()))
                std::fprintf(stderr, "[%d/%d] %s: %s %d/%d, ETA %s\n", index_ + 1, shapes_, label_.c_str(),
                             stage.c_str(), done, total, eta().c_str());
        };
        p.shape_finished = [this](const ShapeOutcome& o) {
            ++finished_;
            if (!o.skipped) ++tuned_, tuned_seconds_ += o.seconds;
            clear_line();
            if (o.skipped && !o.winner.narrowed_by.empty())
                std::fprintf(stderr,
                             "[%d/%d] %s: has a winner (%s, from a search narrowed by %s), skipped; a run that "
                             "searches in full, or --retune, tunes it again\n",
                             finished_, shapes_, o.row.key.to_string().c_str(),
                             printable(o.winner.kernel.description).c_str(), printable(o.winner.narrowed_by).c_str());
            else if (o.skipped)
                std::fprintf(stderr, "[%d/%d] %s: has a winner (%s), skipped; --retune to tune again\n", finished_,
                             shapes_, o.row.key.to_string().c_str(), printable(o.winner.kernel.description).c_str());
            else if (o.untried)
                std::fprintf(stderr,
                             "[%d/%d] %s: --budget-s ran out after %.1f s, before any of %d candidates ran (%d "
                             "compiled); no winner is stored, so calls fall back and the next run tunes it again\n",
                             finished_, shapes_, o.row.key.to_string().c_str(), o.seconds, o.candidates, o.compiled);
            else
                std::fprintf(stderr,
                             "[%d/%d] %s: %s %.4f ms (cuBLAS %.4f ms, %.2fx)%s from %s, %d invalid, %d "
                             "rejected early; %d compiled, %d from cache; %.1f s (compiling %.1f s)\n",
                             finished_, shapes_, o.row.key.to_string().c_str(),
                             o.winner.kernel.is_cublas() ? "cuBLAS" : o.winner.kernel.description.c_str(), o.winner.ms,
                             o.winner.cublas_ms, o.winner.cublas_ms / o.winner.ms, winner_error(o).c_str(),
                             count_of(o.candidates, "candidate", "candidates").c_str(), o.invalid, o.rejected,
                             o.compiled, o.cache_hits, o.seconds, o.compile_seconds);
            if (!o.earlier_narrowed_by.empty())
                std::fprintf(stderr, "[%d/%d] %s: its earlier winner came from a search narrowed by %s, so this run, "
                             "searching in full, tuned it again\n",
                             finished_, shapes_, o.row.key.to_string().c_str(), printable(o.earlier_narrowed_by).c_str());
            if (o.earlier_without_atomics)
                std::fprintf(stderr, "[%d/%d] %s: its earlier winner came from a search without --allow-atomics, so this "
                             "run, which lets kernels that add with atomics compete, tuned it again\n",
                             finished_, shapes_, o.row.key.to_string().c_str());
            if (o.left_out_faulted > 0) {
                const ShapeKey& k = o.row.key;
                std::fprintf(stderr,
                             "[%d/%d] %s: %s left out: they faulted the GPU on this shape before (sgemm-db show %d %d %d "
                             "--trans %s --align %d names them; --retry-faulted tries them again)\n",
                             finished_, shapes_, k.to_string().c_str(),
                             count_of(static_cast<std::size_t>(o.left_out_faulted), "candidate", "candidates").c_str(),
                             k.M, k.N, k.K, k.transposes().c_str(), k.alignment);
            }
        };
        return p;
    }

    // The winner's margin in the check, as ", error max 3.1 u of 56 u, rms 0.42 u of 4.0 u"
    // (tuner/accuracy.h); nothing for cuBLAS, whose output is the reference unless --check-fp64.
    static std::string winner_error(const ShapeOutcome& o) {
        if (!o.winner_accuracy) return "";
        const Accuracy& a = *o.winner_accuracy;
        const double u = unit_roundoff_fp32();
        char text[96];
        std::snprintf(text, sizeof text, ", error max %.1f u of %.0f u, rms %.2f u of %.1f u", a.max_scaled_err / u,
                      a.tolerance / u, a.rms_scaled_err / u, a.rms_tolerance / u);
        return text;
    }

    // On a terminal the progress bar holds the line: cleared before other words.
    void clear_line() const {
        if (tty_) std::fprintf(stderr, "\r\033[K");
    }

    // The shape a stop cut short (ShapeOutcome::interrupted).
    void interrupted(const ShapeOutcome& o) const {
        clear_line();
        std::fprintf(stderr, "[%d/%d] %s: stopped during its search after %.1f s; what it measured is stored, but no "
                             "winner\n",
                     index_ + 1, shapes_, o.row.key.to_string().c_str(), o.seconds);
    }

private:
    std::string eta() const {
        if (tuned_ == 0) return "--:--";
        const int left = static_cast<int>(tuned_seconds_ / tuned_ * (shapes_ - finished_));
        char text[16];
        std::snprintf(text, sizeof text, "%d:%02d", left / 60, left % 60);
        return text;
    }

    bool tty_;
    int shapes_, first_, index_ = 0, candidates_ = 0, finished_, tuned_ = 0;
    double tuned_seconds_ = 0;
    std::string label_;
    SteadyLines lines_{std::chrono::seconds(30)};
};

void print_table(const std::vector<ShapeOutcome>& outcomes, const DeviceModel& model, Json& json_rows) {
    // The last column: a batch's time over cuBLAS's batch-1 time for the same weights,
    // where the run tuned that batch-1 shape too (batch_cost.h).
    const std::vector<std::optional<double>> over_batch1 = time_over_cublas_batch1(outcomes);
    // The layout and precision too: a CSV may hold one size both ways (NN and NT weights).
    std::printf("\n%-10s %6s %7s %6s %-7s  %-44s %10s %8s %8s %9s %13s\n", "name", "M", "N", "K", "layout", "winner",
                "ms", "TFLOPS", "% floor", "x cuBLAS", "/ cuBLAS M=1");
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const ShapeOutcome& o = outcomes[i];
        const ShapeKey& k = o.row.key;
        const double flops = 2.0 * k.M * k.N * static_cast<double>(k.K);
        const double bytes = 4.0 * (static_cast<double>(k.M) * k.K + static_cast<double>(k.K) * k.N +
                                    static_cast<double>(k.M) * k.N);
        const double floor_s = model.floor_seconds(flops, bytes);
        const double seconds = o.winner.ms * 1e-3;
        const std::string winner = o.winner.kernel.is_cublas() ? "cuBLAS" : o.winner.kernel.description;
        char batch1[16] = "-";
        if (over_batch1[i]) std::snprintf(batch1, sizeof batch1, "%.2f", *over_batch1[i]);
        const std::string layout = k.transposes() + " " + to_string(k.precision);
        std::printf("%-10s %6d %7d %6d %-7s  %-44s %10.4f %8.2f %7.1f%% %8.2fx %13s\n", printable(o.row.name).c_str(), k.M, k.N,
                    k.K, layout.c_str(), printable(winner).c_str(), o.winner.ms, flops / seconds / 1e12, 100.0 * floor_s / seconds,
                    o.winner.cublas_ms / o.winner.ms, batch1);
        Json row = Json::object()
                           .set("name", o.row.name)
                           .set("m", k.M)
                           .set("n", k.N)
                           .set("k", k.K)
                           .set("transposes", k.transposes())
                           .set("alignment", k.alignment)
                           .set("weight", o.row.weight)
                           .set("winner", Json::object()
                                              .set("kernel", o.winner.kernel.family)
                                              .set("config", winner)
                                              .set("median_ms", o.winner.ms)
                                              .set("narrowed_by", o.winner.narrowed_by))
                           .set("cublas_ms", o.winner.cublas_ms)
                           .set("tflops", flops / seconds / 1e12)
                           .set("pct_floor", 100.0 * floor_s / seconds)
                           .set("speedup", o.winner.cublas_ms / o.winner.ms)
                           .set("skipped", o.skipped)
                           // The search's counts, as the shape's line gives them.
                           .set("candidates", o.candidates)
                           .set("invalid", o.invalid)
                           .set("rejected_early", o.rejected)
                           .set("left_out_faulted", o.left_out_faulted)
                           .set("compiled", o.compiled)
                           .set("from_cache", o.cache_hits)
                           .set("seconds", o.seconds)
                           .set("compile_seconds", o.compile_seconds);
        if (over_batch1[i]) row.set("time_over_cublas_batch1", *over_batch1[i]);
        // The check of the winner's output (none for cuBLAS but against fp64), in units of u:
        // the largest and root mean square scaled errors and their bounds (tuner/accuracy.h).
        if (o.winner_accuracy) {
            const Accuracy& a = *o.winner_accuracy;
            const double u = unit_roundoff_fp32();
            row.set("error_u", Json::object()
                                   .set("max", a.max_scaled_err / u)
                                   .set("max_tolerance", a.tolerance / u)
                                   .set("rms", a.rms_scaled_err / u)
                                   .set("rms_tolerance", a.rms_tolerance / u));
        }
        json_rows.push(std::move(row));
    }
}

// After an exhaustive run: would the default model strategy have found the winner?
void print_model_evaluation(const std::vector<ShapeOutcome>& outcomes) {
    int shapes = 0, found = 0, within_3 = 0;
    std::printf("\nmodel strategy against exhaustive search (replayed on this run's medians, same top-k and refinement):\n");
    for (const ShapeOutcome& o : outcomes) {
        if (o.exhaustive_best_ms <= 0) continue;
        ++shapes;
        const double ratio = o.model_best_ms > 0 ? o.model_best_ms / o.exhaustive_best_ms : 0;
        if (ratio > 0 && ratio <= 1.0 + 1e-9) ++found;
        if (ratio > 0 && ratio <= 1.03) ++within_3;
        std::printf("  %-36s exhaustive best %.4f ms, model's best %s\n", o.row.key.to_string().c_str(),
                    o.exhaustive_best_ms,
                    ratio > 0 ? (std::to_string(o.model_best_ms).substr(0, 7) + " ms (" +
                                 std::to_string(ratio).substr(0, 5) + "x)").c_str()
                              : "none valid");
    }
    std::printf("model strategy: the exhaustive winner in %d of %d shapes, within 3%% in %d of %d\n", found, shapes,
                within_3, shapes);
}

// Says why each row of `whys` (shapes_too_large) cannot be tuned, a line each, with `kind`
// ("" or "note: ") before and `after` behind: the first kBadLinesShown and how many more, as
// the parse names bad lines.
void say_shapes_too_large(const std::vector<std::string>& whys, const char* kind, const std::string& after) {
    for (std::size_t i = 0; i < whys.size() && i < kBadLinesShown; ++i)
        std::fprintf(stderr, "sgemm-tune: %s%s%s\n", kind, printable(whys[i]).c_str(), after.c_str());
    if (whys.size() > kBadLinesShown)
        std::fprintf(stderr, "sgemm-tune: %sand %zu more shapes it cannot tune\n", kind, whys.size() - kBadLinesShown);
}

// --dry-run: what each shape would compile and time, compiled for the named arch, no GPU.
int dry_run(const ShapesFile& shapes, const std::string& shapes_path, const TuneOptions& options, Arch arch) {
    const DeviceModel model = planning_model(arch);
    const PlanningGpu stand_in = planning_gpu(arch);
    // A row too large for the GPU planned for stops the dry run, as it would stop the tune
    // there. A GPU that stands in for an arch the planner does not know may hold less than
    // that arch's: there it is a note.
    const auto memory_bytes = static_cast<std::size_t>(find_builtin_gpu(stand_in.name).memory_gib * 1073741824.0);
    if (const std::vector<std::string> whys = shapes_too_large(shapes, shapes_path, memory_bytes, options.check_fp64);
        !whys.empty()) {
        if (stand_in.sm == arch.sm) {
            say_shapes_too_large(whys, "", std::string(" (") + stand_in.name + ", the GPU this dry run plans for)");
            return 1;
        }
        say_shapes_too_large(whys, "note: ", std::string(" (") + stand_in.name + ", which stands in for " + arch.name() +
                                                 " here; an " + arch.name() + " GPU may hold more)");
    }
    const std::string which = stand_in.sm == arch.sm ? "" : ", an sm_" + std::to_string(stand_in.sm) + " GPU: the planner knows none of " +
                                                                arch.name() + " and takes the newest arch below";
    std::printf("dry run for %s: the cost model ranks candidates for %s (%d SMs, %.1f TFLOPS, %.2f TB/s)%s\n",
                arch.name().c_str(), printable(model.name).c_str(), model.sm_count, model.fp32_flops / 1e12,
                model.bytes_per_s / 1e12, which.c_str());
    KernelCache cache(nullptr, arch, options.jobs, interrupt_requested);
    int planned = 0;
    auto stopped = [&] {
        std::fprintf(stderr, "sgemm-tune: dry run stopped after %d of %zu shapes\n", planned, shapes.rows.size());
        return end_by_interrupt();
    };
    for (const ShapeRow& input : shapes.rows) {
        // What was printed (the header, the plans before) goes out before this shape's
        // compiles. Where it cannot, the run ends: the rest would have nowhere to go
        // (finish_standard_output says why, with exit status 2).
        if (!send_standard_output()) return 0;
        if (interrupt_requested()) return stopped();
        const ShapeKey& key = input.key;
        const std::vector<Candidate> all = enumerate_candidates(key, arch, options.families, options.atomics_allowed);
        const std::vector<Candidate> chosen = choose_candidates(all, key, model, options.search, {});
        cache.build(chosen);
        if (interrupt_requested()) return stopped();  // the shape's compiles were cut short
        ++planned;
        // The walks' candidates depend on the times, so a dry run can only say that they come.
        const bool walks_follow = options.search.strategy == Strategy::Model && !chosen.empty() &&
                                  (options.search.max_candidates == 0 ||
                                   chosen.size() < static_cast<std::size_t>(options.search.max_candidates));
        std::printf("%s%s: %zu valid candidates, %zu to time%s (%s search)\n", key.to_string().c_str(),
                    input.name.empty() ? "" : (" (" + printable(input.name) + ")").c_str(), all.size(), chosen.size(),
                    walks_follow ? ", then the walks from the fastest" : "", to_string(options.search.strategy).c_str());
        if (all.empty())
            std::printf("  none of the families searched runs this shape on %s: a tune stores cuBLAS for it\n",
                        arch.name().c_str());
        for (const Candidate& c : chosen) {
            const BuiltKernel b = cache.get(c);
            const double est_us = estimate_cost(c, key, model, b.kernel ? &b.kernel->ptxas : nullptr).seconds * 1e6;
            if (!b.kernel)
                // Whole, a line of the log to a line: a dry run is where a family's author
                // reads why a configuration does not compile (a tune stores 400 bytes of it).
                std::printf("  %-48s does not compile:\n%s\n", c.describe().c_str(),
                            indented(printable_lines(trim(b.error)), "    ").c_str());
            else
                // Shared memory per block at this shape: ptxas's static part and the launch's dynamic part.
                std::printf("  %-48s est %8.1f us  %3d registers  %6u B smem  %s\n", c.describe().c_str(), est_us,
                            b.kernel->ptxas.registers,
                            static_cast<unsigned>(b.kernel->ptxas.shared_bytes) +
                                c.family->geometry(c.values, key.M, key.N, key.K).dynamic_shared_bytes,
                            spills_reason(b.kernel->ptxas).empty() ? "no spills" : spills_reason(b.kernel->ptxas).c_str());
        }
    }
    std::printf("dry run: %s compiled for %s; nothing was timed or stored\n",
                count_of(static_cast<std::size_t>(cache.compiled()), "kernel", "kernels").c_str(),
                arch.name().c_str());
    return 0;
}

// More faults than this in one run end it: a fault that many kernels meet is the driver's or
// the GPU's, and a new process for each would only repeat it.
constexpr int kMostFaultsPerRun = 10;

// What the tune's processes share: the command line's choices, fixed before the first is
// forked, and the shapes, which a tune of the misses finds in its first process.
struct TuneRun {
    TuneOptions options;
    int device_ordinal = 0;
    std::string db_path;
    bool from_misses = false;
    ShapesFile shapes;
    std::string shapes_path;
    // After a fault: the shapes that earlier processes finished, from which the next goes on,
    // and the seconds that the search the fault cut short had spent.
    std::vector<ShapeOutcome> finished;
    double cut_short_seconds = 0;
};

// One process of the tune: the shapes after those of run.finished, its report written to
// `report_fd` (tuner/tune_report.h). The first process also does what the tune needs before its
// shapes: it finds the misses and the shapes too large, and says what it tunes where. A later
// one goes on `after_fault`, from the shape the fault cut short. Returns the process's exit
// status: 0 once the report is written, else what stopped it, said on standard error.
int tune_in_this_process(TuneRun run, bool after_fault, int report_fd) {
    const std::size_t first = run.finished.size();
    try {
        const DeviceInfo device = use_device(run.device_ordinal);
        compile_target_of(device);  // throws, naming the targets, for a GPU NVRTC cannot compile for
        if (run.from_misses && !after_fault) {
            const DeviceFingerprint fingerprint = fingerprint_of(device);
            const std::string device_id = fingerprint.id();
            MissesOfGpu found;
            {
                TuningStore reader(run.db_path, OpenMode::ReadOnly);
                found = misses_of_gpu(reader, fingerprint);
            }
            run.shapes_path = "the misses of device " + device_id;
            if (!found.earlier_builds.empty()) {
                const std::string builds = count_of(found.earlier_builds.size(), "earlier build", "earlier builds");
                run.shapes_path += " and its " + builds;
                std::string named;
                for (const std::string& b : found.earlier_builds) named += (named.empty() ? "" : ", ") + b;
                // Said on every run: a shape with a winner for this build is skipped as any other.
                std::fprintf(stderr, "sgemm-tune: note: with the misses of %s of this GPU, whose rows this build's "
                                     "dispatch does not read: %s\n", builds.c_str(), printable(named).c_str());
            }
            const ShapesOfMisses misses = shapes_of_misses(found.misses);
            run.shapes.rows = misses.rows;
            if (misses.left_out > 0)
                std::fprintf(stderr, "sgemm-tune: note: %s of a precision other than fp32 left out: only fp32 is "
                                     "tuned so far\n", count_of(misses.left_out, "shape key", "shape keys").c_str());
            if (run.shapes.rows.empty()) {
                std::fprintf(stderr, "sgemm-tune: %s holds no misses of this GPU (device %s) that it can tune\n",
                             printable(run.db_path).c_str(), device_id.c_str());
                return 0;
            }
            // Dispatch records calls whose operands fit where tuning them does not: those are
            // named and the rest tuned.
            const std::vector<std::string> dropped = drop_shapes_too_large(run.shapes, run.shapes_path,
                                                                           device.global_memory_bytes, run.options.check_fp64);
            say_shapes_too_large(dropped, "note: ", run.shapes.rows.empty() ? "" : " (left out; the other misses are tuned)");
            if (run.shapes.rows.empty()) {
                std::fprintf(stderr, "sgemm-tune: no miss of this GPU fits its memory for tuning\n");
                return 1;
            }
        }
        if (!after_fault) {
            const std::vector<std::string> whys = shapes_too_large(run.shapes, run.shapes_path,
                                                                   device.global_memory_bytes, run.options.check_fp64);
            if (!whys.empty()) {
                say_shapes_too_large(whys, "", "");
                return 1;
            }
        }
        TuningStore store(run.db_path, OpenMode::ReadWrite);
        const std::vector<ShapeRow>& rows = run.shapes.rows;
        if (!after_fault) {
            // The ordinal too: on a machine of several GPUs, which one is timed.
            std::fprintf(stderr, "sgemm-tune: %s on device %d, %s (sm_%d), database %s, %s search\n",
                         count_of(rows.size(), "shape", "shapes").c_str(), device.ordinal, device.name.c_str(),
                         device.sm(), printable(store.path()).c_str(), to_string(run.options.search.strategy).c_str());
            if (const std::string upgraded = upgrade_notice(store.path(), store.opened_version()); !upgraded.empty())
                std::fprintf(stderr, "sgemm-tune: note: %s\n", printable(upgraded).c_str());
        }
        ProgressPrinter printer(static_cast<int>(rows.size()), run.finished);
        const auto start = std::chrono::steady_clock::now();
        warm_up_nvrtc();  // before the handler: NVRTC's first compile would replace it for a moment
        stop_on_interrupt("sgemm-tune", "after the candidate being timed or the compiles in progress; the shapes finished keep their winners");
        run.options.stop_requested = interrupt_requested;
        run.options.first_shape_cut_short_by_fault = after_fault;
        run.options.first_shape_seconds_spent = run.cut_short_seconds;
        Tuner tuner(store, device, run.options, printer.callbacks());
        TuneReport report;
        report.outcomes = tuner.tune_all(std::vector<ShapeRow>(rows.begin() + static_cast<std::ptrdiff_t>(first), rows.end()));
        report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!report.outcomes.empty() && !report.outcomes.back().fault.empty())
            printer.clear_line();  // the progress bar of the shape the fault cut short
        if (!report.outcomes.empty() && report.outcomes.back().interrupted) printer.interrupted(report.outcomes.back());
        report.device = device;
        report.database = store.path();
        report.shapes_source = run.shapes_path;
        report.rows = rows;
        const DeviceModel model = device_model(device);
        report.peak_flops = model.fp32_flops;
        report.bytes_per_s = model.bytes_per_s;
        report.signal = interrupt_signal();
        if (!write_all(report_fd, encode_tune_report(report))) {
            std::fprintf(stderr, "sgemm-tune: could not hand the tune's results to its parent process: %s\n",
                         std::strerror(errno));
            return 2;
        }
        return 0;
    } catch (const NoSuchDeviceError& e) {
        std::fprintf(stderr, "sgemm-tune: --device: %s\n", printable_lines(e.what()).c_str());
        return 1;
    } catch (const NoDeviceError& e) {
        std::fprintf(stderr, "sgemm-tune: %s\n", printable_lines(e.what()).c_str());
        // Nothing can be tuned, but what would stop the tune on a GPU is said now as well: for a
        // tune of the misses, first the file it reads them from, which must be there, and then,
        // as for any tune, whether it can take the winners.
        try {
            if (run.from_misses) TuningStore(run.db_path, OpenMode::ReadOnly);
            check_writable_database(run.db_path);
        } catch (const std::exception& problem) {
            std::fprintf(stderr, "sgemm-tune: and with a GPU the tune would stop on its database: %s\n",
                         printable_lines(problem.what()).c_str());
        }
        return 2;
    } catch (const std::exception& e) {
        // On a terminal the progress bar may hold the line: clear it first.
        std::fprintf(stderr, "%ssgemm-tune: %s\n", isatty(STDERR_FILENO) ? "\r\033[K" : "", printable_lines(e.what()).c_str());
        return 2;
    }
}

// How a process of the tune ended, where it handed back no report: a signal before its own
// handler was set, a crash, or an error it said on standard error (its exit status).
struct WithoutReport {
    int signal = 0;  // SIGINT or SIGTERM: a stop like any other
    int status = 0;  // the exit status the run ends with otherwise
};

WithoutReport without_report(const ChildEnd& end) {
    if (end.signal == SIGINT || end.signal == SIGTERM) return {end.signal, 0};
    if (end.signal != 0) {
        std::fprintf(stderr, "sgemm-tune: the process the tune ran in was ended by signal %d (%s)\n", end.signal,
                     strsignal(end.signal));
        return {0, 2};
    }
    if (!end.output.empty() || end.exit_status == 0) {
        std::fprintf(stderr, "sgemm-tune: the process the tune ran in handed back a report cut short (exit status "
                             "%d)\n", end.exit_status);
        return {0, 2};
    }
    return {0, end.exit_status};
}

// The tune, in child processes (tools/cli_child_process.h), since a candidate that faults the
// GPU loses its process's CUDA context: the fault is stored, and a new process goes on from the
// shape it cut short, without that candidate there. This process, which never touches the GPU,
// gathers their outcomes and prints the table of the whole run, also where a later process
// ended without its report.
int tune(TuneRun& run, const std::string& json_path) {
    std::vector<ShapeOutcome> outcomes;
    std::vector<std::string> faults;  // every fault of the run
    TuneReport whole;                 // the first process's device, database and shapes
    bool reported = false;
    double seconds = 0;
    int stop_signal = 0;  // the signal that stopped the run, where one came
    WithoutReport broken;
    for (;;) {
        const bool after_fault = !faults.empty();
        run.finished = outcomes;
        const ChildEnd end = run_in_child([&](int fd) { return tune_in_this_process(run, after_fault, fd); });
        std::optional<TuneReport> report;
        if (!end.output.empty()) {
            try {
                report = decode_tune_report(end.output);
            } catch (const Error&) {  // cut short: said below
            }
        }
        if (!report) {
            if (!reported && end.output.empty() && end.signal == 0) return end.exit_status;  // it said why
            broken = without_report(end);
            if (broken.signal != 0) stop_signal = broken.signal;
            if (!reported) return stop_signal != 0 ? end_by_signal(stop_signal) : broken.status;
            break;
        }
        if (end.signal == SIGINT || end.signal == SIGTERM) stop_signal = end.signal;  // a second one, as it ended
        if (!reported) {
            run.shapes.rows = report->rows;  // a tune of the misses found them in its first process
            run.shapes_path = report->shapes_source;
            whole = *report;
            reported = true;
        }
        seconds += report->seconds;
        if (report->signal != 0) stop_signal = report->signal;  // the process may have had it alone
        outcomes.insert(outcomes.end(), report->outcomes.begin(), report->outcomes.end());
        if (outcomes.empty() || outcomes.back().fault.empty()) break;
        faults.push_back(outcomes.back().fault);
        if (static_cast<int>(faults.size()) >= kMostFaultsPerRun || stop_signal != 0 || interrupt_requested()) break;
        std::fprintf(stderr,
                     "sgemm-tune: %s. The CUDA context is lost, so the run goes on in a new process from shape %zu "
                     "of %zu, leaving this candidate out of it; what the search measured is stored, with the fault.\n",
                     printable_lines(outcomes.back().fault).c_str(), outcomes.size(), run.shapes.rows.size());
        run.cut_short_seconds = outcomes.back().seconds;
        outcomes.pop_back();
    }
    const std::vector<ShapeRow>& rows = run.shapes.rows;
    const DeviceInfo& device = whole.device;
    if (stop_signal == 0) stop_signal = interrupt_signal();

    // The last fault, where the run did not go on after it: with a stop, or as the last of
    // kMostFaultsPerRun, which ends the run. The shape it cut short stored no winner.
    std::string fault_at_stop, fault_that_ended;
    if (!outcomes.empty() && !outcomes.back().fault.empty()) {
        (stop_signal != 0 ? fault_at_stop : fault_that_ended) = outcomes.back().fault;
        outcomes.pop_back();
    }
    // A signal during the last candidate of the last shape leaves every search whole, yet the
    // run still ends by it, so that a calling script stops as it asked.
    const bool stopped = fault_that_ended.empty() && broken.status == 0 &&
                         (stop_signal != 0 || outcomes.size() < rows.size() ||
                          (!outcomes.empty() && outcomes.back().interrupted));
    if (!outcomes.empty() && outcomes.back().interrupted) outcomes.pop_back();

    const std::size_t finished = outcomes.size();
    // A shape whose budget ran out before any candidate has no winner for the table.
    const auto untried = std::stable_partition(outcomes.begin(), outcomes.end(),
                                               [](const ShapeOutcome& o) { return !o.untried; });
    const long untried_count = std::distance(untried, outcomes.end());
    outcomes.erase(untried, outcomes.end());

    Json table_rows = Json::array();
    DeviceModel model;
    model.fp32_flops = whole.peak_flops;
    model.bytes_per_s = whole.bytes_per_s;
    if (!outcomes.empty()) {
        print_table(outcomes, model, table_rows);
        std::printf("\n%s in %.1f s\n", count_of(finished, "shape", "shapes").c_str(), seconds);
    }
    if (untried_count > 0)
        std::printf("\n%ld %s no winner: --budget-s ran out before any candidate ran (a larger budget, or the "
                    "same command again with what compiled now cached)\n",
                    untried_count, untried_count == 1 ? "shape has" : "shapes have");
    if (run.options.search.strategy == Strategy::Exhaustive && !outcomes.empty()) print_model_evaluation(outcomes);
    const int written = finish_standard_output_after_work("sgemm-tune", "the table to standard output");
    if (!fault_at_stop.empty())
        std::fprintf(stderr, "sgemm-tune: %s. The fault is stored, and the next run leaves this candidate out of this "
                             "shape.\n", printable_lines(fault_at_stop).c_str());
    if (stopped)
        std::fprintf(stderr, "sgemm-tune: stopped after %zu of %zu shapes; the winners are in %s. %s\n", finished,
                     rows.size(), printable(whole.database).c_str(),
                     run.options.retune ? "The shapes not re-tuned keep their earlier winners."
                                        : "The same command goes on from there (shapes with a winner are skipped).");
    int json_written = 0;
    if (!json_path.empty()) {
        Json fault_list = Json::array();
        for (const std::string& f : faults) fault_list.push(Json(f));
        Json doc = Json::object();
        doc.set("gpu", device.name)
            .set("sm", device.sm())
            .set("database", whole.database)
            .set("strategy", to_string(run.options.search.strategy))
            .set("atomics_allowed", run.options.atomics_allowed)
            .set("seconds", seconds)
            .set("interrupted", stopped)
            .set("fault", fault_that_ended)  // empty, or the last of the faults that ended the run
            .set("faults", fault_list)       // every candidate that faulted the GPU in this run
            .set("untried_shapes", untried_count)  // no winner: --budget-s ran out first
            // The ceilings of "pct_floor", so that a plot of this table uses the same ones.
            .set("peak_tflops", model.fp32_flops / 1e12)
            .set("bandwidth_tbs", model.bytes_per_s / 1e12)
            .set("shapes", table_rows);
        json_written = write_output_file_after_work("sgemm-tune", json_path, doc.dump() + "\n");
    }
    if (!fault_that_ended.empty()) {
        std::fprintf(stderr,
                     "sgemm-tune: %s. %zu candidates faulted the GPU in this run, which points to the driver or the "
                     "GPU rather than to a kernel, so the run ended after %zu of %zu shapes; what it measured is "
                     "stored, with the faults. The same command%s %s, and leaves this candidate out of this shape.\n",
                     printable_lines(fault_that_ended).c_str(), faults.size(), finished, rows.size(),
                     run.options.retry_faulted ? " without --retry-faulted" : "",
                     run.options.retune ? "tunes every shape again" : "goes on from there");
        return 2;
    }
    if (!faults.empty())
        std::fprintf(stderr,
                     "sgemm-tune: note: %s faulted the GPU in this run (said above); each is stored and left out of "
                     "its shape from now on (sgemm-db show names them; --retry-faulted tries them again)\n",
                     count_of(faults.size(), "candidate", "candidates").c_str());
    if (broken.status != 0) return broken.status;
    if (stopped) return end_by_signal(stop_signal);
    // Output that did not arrive ranks below what the run found: its winners are stored.
    if (written != 0) return written;
    if (json_written != 0) return json_written;
    return untried_count > 0 ? kSomeShapesUntried : 0;
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description opts(
        "sgemm-tune: find the fastest correct SGEMM kernel for every shape of a CSV on this GPU and store\n"
        "the winners in the tuning database, which libsgemm_dispatch reads.\n\n"
        "For each shape: the candidates of the kernel families are pruned by their constraints, chosen by\n"
        "the search strategy, compiled with NVRTC through the database's binary cache (in parallel),\n"
        "validated against cuBLAS (output poisoned with NaN; tolerance u*(2*log2(K)+32) per element and\n"
        "a bound on their root mean square, see tuner/accuracy.h; three to five more runs at other alpha\n"
        "and beta, on rows laid out anew too), timed with CUDA events, the L2 cache flushed and the SMs' instruction\n"
        "caches evicted before every run (adaptive number of runs; a candidate 1.5x slower than the best\n"
        "after 3 runs is dropped), and compared with cuBLAS timed in the same run. Every measurement is\n"
        "stored as it is taken; a re-run skips shapes that already have a winner for this device.\n"
        "Ctrl-C (or SIGTERM) stops after the candidate being timed or the compiles in progress; the\n"
        "shapes finished keep their winners and the table shows them; exit status 130 (143 for\n"
        "SIGTERM). A second signal quits at once. A candidate that faults the GPU loses the CUDA context\n"
        "of the process the tune runs in: the fault is stored, and the run goes on in a new process from\n"
        "that shape, which leaves the candidate out from then on (--retry-faulted tries it again). Ten\n"
        "faults in one run end it, with exit status 2.\n\n"
        "Exit status: 0 every shape has its winner; 1 bad arguments (a --device past the GPUs too), a bad\n"
        "shapes file, or a shape (with --from-misses: every miss) too large for the GPU's memory\n"
        "(nothing tuned); 2 no GPU, a database or GPU problem, ten faults, NVRTC's own failure (a\n"
        "damaged install), or standard output or the --json file lost; 3 --budget-s left some shapes\n"
        "without a winner (the others are stored; the same command tunes them again); 130 or 143\n"
        "stopped by a signal, which comes before a lost output's 2 (the winners are stored either way).\n\n"
        "Usage: sgemm-tune --shapes decode.csv [--db PATH] [--strategy model|exhaustive|random]\n"
        "       sgemm-tune --shapes decode.csv --dry-run [--arch sm_90]\n"
        "       sgemm-tune --from-misses [--db PATH]      # what dispatch met without a winner on this GPU\n\n"
        "Shapes CSV: header M,N,K plus optional transA,transB,precision,weight,name,align; '#' comments.\n"
        "align (16, 8 or 4 bytes) tunes a shape for an engine's padded or offset buffers of that\n"
        "alignment class; empty or absent: tightly packed operands.\n\n"
        "Options");
    opts.add_options()("help,h", "show this help")
        ("shapes", po::value<std::string>(), "the shapes CSV to tune; - reads it from standard input (sgemm-shapes "
         "llama-3-8b | sgemm-tune --shapes -)")
        ("from-misses", "tune the shape keys libsgemm_dispatch recorded without an exact winner on this GPU "
         "(the database's misses, most frequent first) instead of a CSV; each on operands of the alignment class "
         "its calls had (padded or offset rows), as a CSV row's align column asks (tightly packed where it is empty). "
         "Misses this GPU met under another driver, CUDA or sgemm build are tuned too, for this build")
        ("db", po::value<std::string>(), (std::string("tuning database; default: ") + kDefaultDbPathRule).c_str())
        ("strategy", po::value<std::string>()->default_value("model"),
         "model: cost-model ranking, time the best --top-k plus neighbouring shapes' winners, then walk "
         "downhill from the 3 fastest by one-step moves and time every split count of the 3 fastest tiles; "
         "exhaustive: every pruned candidate; random: --budget candidates")
        ("top-k", po::value<int>()->default_value(SearchPlan{}.top_k), "candidates the model strategy times per shape (1 or more)")
        ("budget", po::value<int>()->default_value(SearchPlan{}.random_budget),
         "candidates the random strategy times per shape (1 or more)")
        ("seed", po::value<long long>()->default_value(1), "seed of the random strategy (0 or more)")
        ("max-candidates", po::value<int>()->default_value(0),
         "cap on the candidates timed per shape, any strategy, the model strategy's walks included (0: none)")
        ("budget-s", po::value<double>()->default_value(0), "wall-time cap per shape in seconds, compiling included; a shape that spends it "
         "before any candidate runs gets no winner, and the next run tunes it again (0: none; else a finite number above 0)")
        ("families", po::value<std::string>(),
         "comma-separated kernel families to search (default: all but the teaching rungs naive, smem, blocktile)")
        ("retune", "tune shapes that already have a winner for this device (without it, a run that searches in "
         "full still tunes again the shapes whose winners came from a narrowed search: one with --families short "
         "of the default, --strategy random, a smaller --top-k, or a --max-candidates or --budget-s that cut it "
         "short. A run searches in full with none of these, and no --max-candidates or --budget-s at all)")
        ("retry-faulted", "try again the candidates that faulted the GPU on a shape in an earlier run, which are "
         "otherwise left out of that shape (after a driver update or a hardware repair, say): such shapes are "
         "tuned again though they have winners. One that runs right counts as faulted no more; one that faults "
         "again is left out of that shape again, as the run goes on")
        ("check-fp64", "validate against an fp64 reference (cuBLAS DGEMM) instead of cuBLAS fp32")
        ("allow-atomics", "also try split-K kernels whose slices add into C with float atomics: on small grids "
         "(batch-32 decode, 1024^3) a few percent faster, but the order of the adds, and so the last bits of C, "
         "then vary from run to run (cuBLAS's CUBLAS_ATOMICS_ALLOWED); without it every kernel the run stores "
         "repeats bit for bit, and a shape whose winner adds with atomics is tuned again; with it, a shape whose "
         "winner came from a run without it is tuned again. A dispatch handle "
         "created with options.deterministic runs the fastest kernel without atomics measured instead")
        ("jobs", po::value<int>()->default_value(static_cast<int>(usable_cpus())),
         "compile threads, 1 or more (default: the CPUs this process may run on, counted here)")
        ("dry-run", "list and compile what would be timed per shape; needs no GPU, stores nothing; stops on a row "
                    "too large for the GPU it plans for, as the tune would")
        ("arch", po::value<std::string>()->default_value("sm_90"), "compile target of --dry-run, which ranks candidates for a built-in GPU of that arch or the newest below it: "
         "sm_90 and up an H200, sm_86 to sm_89 an RTX 3090, sm_80 an A100-80GB, sm_75 a T4")
        ("device", po::value<int>()->default_value(0), "CUDA device ordinal (0 or more)")
        ("json", po::value<std::string>(), "also write the final table as JSON to this file");

    ShapesFile shapes;
    std::string shapes_path, db_path, json_path;
    TuneOptions options;
    bool dry = false, from_misses = false;
    std::string dry_ignored;       // options given that a dry run does not use
    std::string strategy_ignored;  // options given that the search strategy does not use
    Arch dry_arch;
    int device_ordinal = 0;
    try {
        po::variables_map vm;
        if (!parse_or_print_help(argc, argv, opts, vm)) return finish_standard_output("sgemm-tune", "the help");
        from_misses = vm.count("from-misses") > 0;
        if (from_misses == (vm.count("shapes") > 0)) throw po::error("give --shapes FILE or --from-misses, one of them");
        if (from_misses && vm.count("dry-run"))
            throw po::error("--from-misses reads this GPU's misses from the database, so it cannot be a --dry-run");
        if (!from_misses) shapes_path = vm["shapes"].as<std::string>();
        if (!from_misses && shapes_path.empty()) throw po::error("--shapes is empty");
        options.search.strategy = option_value([&] { return parse_strategy(vm["strategy"].as<std::string>()); });
        options.search.top_k = vm["top-k"].as<int>();
        options.search.random_budget = vm["budget"].as<int>();
        if (const long long seed = vm["seed"].as<long long>(); seed < 0)
            throw po::error("--seed must be 0 or more, not " + std::to_string(seed));
        options.search.seed = static_cast<unsigned long long>(vm["seed"].as<long long>());
        options.search.max_candidates = vm["max-candidates"].as<int>();
        options.budget_seconds = vm["budget-s"].as<double>();
        options.jobs = vm["jobs"].as<int>();
        for (const auto& [option, value, least] :
             {std::tuple<const char*, double, int>{"top-k", options.search.top_k, 1},
              {"budget", options.search.random_budget, 1},
              {"jobs", options.jobs, 1},
              {"max-candidates", options.search.max_candidates, 0},
              {"budget-s", options.budget_seconds, 0}})
            if (!(value >= least)) {  // NaN too
                char given[32];
                std::snprintf(given, sizeof given, "%g", value);
                throw po::error(std::string("--") + option + " must be at least " + std::to_string(least) + ", not " +
                                given);
            }
        // An infinite cap stops nothing, yet marks the run as not in full (which keeps narrowed
        // winners from being tuned again): 0 is the way to say none.
        if (!std::isfinite(options.budget_seconds))
            throw po::error("--budget-s must be a finite number of seconds (0 for no cap), not inf");
        if (vm.count("families")) {
            options.families = option_value([&] {
                std::vector<std::string> names = parse_name_list(lower_case(vm["families"].as<std::string>()), "families");
                for (const std::string& f : names) find_family(f);
                return names;
            });
        }
        options.retune = vm.count("retune") > 0;
        options.retry_faulted = vm.count("retry-faulted") > 0;
        options.check_fp64 = vm.count("check-fp64") > 0;
        options.atomics_allowed = vm.count("allow-atomics") > 0;
        dry = vm.count("dry-run") > 0;
        if (!dry && !vm["arch"].defaulted())
            throw po::error("--arch is the compile target of --dry-run; a tune compiles for the GPU it runs on");
        // A dry run is often the real command with --dry-run added: say what it leaves aside.
        // (--check-fp64 is not among them: its fp64 reference counts in the memory a shape needs.)
        for (const char* option : {"db", "device", "retune", "retry-faulted", "budget-s"})
            if (dry && vm.count(option) && !vm[option].defaulted())
                dry_ignored += std::string(dry_ignored.empty() ? "--" : ", --") + option;
        // Each strategy reads its own options: name the ones this run's strategy leaves aside.
        const Strategy strategy = options.search.strategy;
        // (exhaustive reads --top-k too: its replay of the model strategy uses it.)
        for (const auto& [option, reader] : {std::pair<const char*, Strategy>{"top-k", Strategy::Model},
                                             {"budget", Strategy::Random},
                                             {"seed", Strategy::Random}})
            if (strategy != reader && !(reader == Strategy::Model && strategy == Strategy::Exhaustive) &&
                !vm[option].defaulted())
                strategy_ignored += std::string(strategy_ignored.empty() ? "--" : ", --") + option;
        dry_arch = option_value([&] { return parse_arch(vm["arch"].as<std::string>()); });
        device_ordinal = vm["device"].as<int>();
        if (device_ordinal < 0) throw po::error("--device must be 0 or more (a CUDA device ordinal)");
        // A dry run opens no database: it needs no path, which a user without a home has not.
        if (!dry) db_path = database_path(vm);
        // A tune makes its database where there is none, but not in a folder that a typo named
        // (a tune of the misses needs its database there already, and says so).
        if (!dry && !from_misses)
            if (const std::string why = missing_folder_of_a_named_database(vm, db_path); !why.empty()) throw Error(why);
        if (vm.count("json")) {
            json_path = vm["json"].as<std::string>();
            // The table is written over its file at the end: never over what the run reads. The
            // database first, which check_output_file would call just an SQLite database.
            if (!dry) check_output_is_not_database(json_path, "json", db_path);
            check_output_file(json_path, "json");
            check_output_is_not_input(json_path, "json", shapes_path, "the shapes CSV");
        }
        if (shapes_path == "-") {
            say_when_reading_a_terminal("sgemm-tune", "the shapes CSV");
            shapes_path = "standard input";  // as its messages name it
            shapes = load_shapes_csv("-");
        } else if (!from_misses) {
            shapes = load_shapes_csv(shapes_path);  // the whole file is checked before anything else
        }
    } catch (const po::error& e) {  // the command line itself: point to the options, as the other tools do
        std::fprintf(stderr, "sgemm-tune: %s\nTry 'sgemm-tune --help'.\n", usage_error_text(e).c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sgemm-tune: %s\n", printable_lines(e.what()).c_str());
        return 1;
    }
    for (const std::string& w : shapes.warnings) std::fprintf(stderr, "sgemm-tune: warning: %s\n", printable_lines(w).c_str());
    if (!strategy_ignored.empty())
        std::fprintf(stderr, "sgemm-tune: note: the %s strategy does not use %s\n",
                     to_string(options.search.strategy).c_str(), strategy_ignored.c_str());

    if (dry) {
        if (!dry_ignored.empty())
            std::fprintf(stderr, "sgemm-tune: note: a dry run uses no GPU and no database, so it leaves out %s\n",
                         dry_ignored.c_str());
        if (!json_path.empty())
            std::fprintf(stderr, "sgemm-tune: note: a dry run times nothing, so it writes no --json table (%s was "
                                 "only checked)\n", printable(json_path).c_str());
        try {
            warm_up_nvrtc();  // before the handler: NVRTC's first compile would replace it for a moment
            stop_on_interrupt("sgemm-tune", "after the compiles in progress");
            const int status = dry_run(shapes, shapes_path, options, dry_arch);
            const int written = finish_standard_output_after_work("sgemm-tune", "standard output");
            return status != 0 ? status : written;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "sgemm-tune: %s\n", printable_lines(e.what()).c_str());
            return 2;
        }
    }

    TuneRun run;
    run.options = options;
    run.device_ordinal = device_ordinal;
    run.db_path = db_path;
    run.from_misses = from_misses;
    run.shapes = shapes;
    run.shapes_path = shapes_path;
    try {
        return tune(run, json_path);
    } catch (const std::exception& e) {  // no child process could be started, or its report read
        std::fprintf(stderr, "sgemm-tune: %s\n", printable_lines(e.what()).c_str());
        return 2;
    }
}
