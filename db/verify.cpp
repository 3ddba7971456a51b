#include "db/verify.h"

#include <cmath>
#include <cstdio>

#include "db/cubin_elf.h"
#include "db/exchange.h"
#include "src/util/text.h"

namespace sgemm {

namespace {

// What a time was measured of: one of this project's kernels, which are FFMA alone in fp32,
// or cuBLAS, which on Blackwell (compute capability 10 and later) may compute fp32 on tensor
// cores (CUBLAS_EMULATE_SINGLE_PRECISION), several times faster than FFMA.
enum class TimeOf { kernel, cublas };

// The most `device` could compute, generously: 3.5 GHz, past any GPU's clock, and 128 FMA
// lanes an SM for FFMA (A100 has 64, later GPUs 128), or 4096 tensor-core FMAs an SM a cycle
// (about twice Blackwell's in tf32). A time faster than that was edited or damaged, not
// measured, and would win every later merge and import ("the faster winner stays") over the
// device's real winners.
struct Fastest {
    double flops_per_second;
    const char* by;
};
Fastest fastest(const DeviceFingerprint& device, GemmPrecision precision, TimeOf of) {
    constexpr double kClockHz = 3.5e9, kFfmaFlopsPerSmCycle = 2 * 128, kTensorFlopsPerSmCycle = 2 * 4096;
    const bool tensor = precision == GemmPrecision::tf32 || (of == TimeOf::cublas && device.cc_major >= 10);
    return {device.sm_count * kClockHz * (tensor ? kTensorFlopsPerSmCycle : kFfmaFlopsPerSmCycle),
            tensor ? "tensor cores" : "FFMA"};
}

std::string in_tflops(double flops_per_second) {
    char text[40];
    std::snprintf(text, sizeof text, "%.3g TFLOPS", flops_per_second / 1e12);
    return text;
}

// Why `ms` cannot be a measured time of `shape` (on `device`, where its fields are known), or
// empty. Under 0.1 us no launch ends, and no GPU computes faster than `fastest`. Nor does any
// GPU take over a second at under 1 GFLOPS (a T4 computes 8,000 times as fast): such a cuBLAS
// time would show its winner thousands of times faster than cuBLAS.
std::string implausible_time(const ShapeKey& shape, const DeviceFingerprint* device, TimeOf of, double ms) {
    if (!(std::isfinite(ms) && ms > 0)) return "is not a positive number";
    constexpr double kShortestLaunchMs = 1e-4, kLongestSlowLaunchMs = 1e3, kSlowestFlopsPerSecond = 1e9;
    if (ms < kShortestLaunchMs) return "is under 0.1 us, shorter than any launch";
    const double flops = 2.0 * shape.M * shape.N * shape.K, flops_per_second = flops / (ms * 1e-3);
    if (device) {
        const Fastest most = fastest(*device, shape.precision, of);
        if (flops_per_second > most.flops_per_second)
            return "would be " + in_tflops(flops_per_second) + ", more than " + std::to_string(device->sm_count) +
                   " SMs could compute (" + in_tflops(most.flops_per_second) + " by " + most.by + " at 3.5 GHz)";
    }
    if (ms > kLongestSlowLaunchMs && flops_per_second < kSlowestFlopsPerSecond)
        return "is over a second at under 1 GFLOPS, slower than any GPU computes";
    return "";
}

}  // namespace

std::string winner_time_problem(const Winner& winner, const DeviceFingerprint* device) {
    const TimeOf of = winner.kernel.is_cublas() ? TimeOf::cublas : TimeOf::kernel;
    if (const std::string why = implausible_time(winner.shape, device, of, winner.ms); !why.empty())
        return "its time " + why;
    if (const std::string why = implausible_time(winner.shape, device, TimeOf::cublas, winner.cublas_ms); !why.empty())
        return "its cuBLAS time " + why;
    return "";
}

std::string cubin_problem(const Binary& binary) {
    if (!binary.cubin_checksum.empty() && cubin_checksum(binary.cubin) != binary.cubin_checksum)
        return "its cubin does not match the checksum stored with it: it was damaged after it was compiled";
    int sm = 0;
    try {
        sm = cubin_sm(binary.cubin);
    } catch (const Error& e) {
        return std::string("its cubin is ") + e.what();
    }
    if (sm != binary.arch)
        return "its cubin is for sm_" + std::to_string(sm) + " but the row says sm_" + std::to_string(binary.arch);
    if (binary.lowered_name.empty()) return "it has no kernel name to look up";
    if (!cubin_defines_kernel(binary.cubin, binary.lowered_name))
        return "its cubin defines no kernel named " + single_quoted(binary.lowered_name) + ", the name the row gives to load it by";
    return "";
}

std::string edited_device_problem(const TuningStore::EditedDeviceRow& row) {
    return "the device row " + row.stored_id.substr(0, 8) + " (" + row.fields.describe() +
           ") does not match its id (edited by hand?): no lookup finds its " + std::to_string(row.winners) +
           " winners";
}

std::string binary_problem(const Binary& binary, const DeviceFingerprint& device) {
    if (std::string problem = cubin_problem(binary); !problem.empty()) return problem;
    if (binary.arch / 10 != device.sm() / 10 || binary.arch > device.sm())
        return "a cubin for sm_" + std::to_string(binary.arch) + " cannot run on " + device.gpu_name + " (sm_" +
               std::to_string(device.sm()) + ")";
    return "";
}

std::string stored_binary_problem(TuningStore& store, const Winner& winner) {
    if (winner.kernel.is_cublas()) return "";
    const std::optional<KernelRef> stored = store.binary_kernel(winner.binary_key);
    if (!stored || (stored->family == winner.kernel.family && stored->template_hash == winner.kernel.template_hash))
        return "";
    return "the binary stored under its key " + winner.binary_key + " is of another kernel family or its sources (" +
           stored->description + ", sources " + stored->template_hash + ")";
}

VerifyReport verify_store(TuningStore& store, const TryLoad& try_load, int gpu_sm, const KernelProblem& kernel_problem) {
    VerifyReport report;
    sqlite::Connection& db = store.connection();
    {
        auto q = db.query("PRAGMA integrity_check");
        while (q.step())
            if (q.text(0) != "ok") report.problems.push_back("integrity: " + q.text(0));
    }
    {
        auto q = db.query("PRAGMA foreign_key_check");
        while (q.step()) {
            // A row of a shape is named by its device and shape, as export's note says verify
            // names each winner it left out; others by their table alone.
            std::string which;
            const std::string table = q.text(0);
            if (!q.is_null(1) && (table == "winners" || table == "measurements" || table == "misses")) {
                auto row = db.query("SELECT device_id, m, n, k, trans_a, trans_b FROM " + table + " WHERE rowid = ?1");
                row.bind(1, q.integer(1));
                if (row.step()) {
                    ShapeKey transposes;
                    transposes.trans_a = row.integer(4) != 0, transposes.trans_b = row.integer(5) != 0;
                    which = " (device " + row.text(0).substr(0, 8) + ", M=" + row.text(1) + " N=" + row.text(2) +
                            " K=" + row.text(3) + " " + transposes.transposes() + ")";
                }
            }
            report.problems.push_back("a row of " + table + which + " refers to a missing row of " + q.text(2));
            // As TuningStore::dangling_rows counts them: a re-tune mends a missing binary.
            if (q.text(2) == "devices" || q.text(2) == "kernels") ++report.dangling_rows;
        }
    }
    // Sizes past int, or not whole numbers, cannot be read as shapes (the store refuses them):
    // report them, values no tune writes, and stop, counting the devices and winners that
    // were not checked.
    for (const char* table : {"winners", "measurements", "misses"}) {
        auto q = db.query(std::string("SELECT device_id, m, n, k FROM ") + table +
                          " WHERE max(m, n, k) > 2147483647 OR typeof(m) != 'integer' OR typeof(n) != 'integer' OR "
                          "typeof(k) != 'integer'");
        while (q.step()) {
            report.problems.push_back(std::string("a row of ") + table + " (device " + q.text(0) + ") holds M=" +
                                      q.text(1) + " N=" + q.text(2) + " K=" + q.text(3) +
                                      ": sizes that are not whole numbers up to 2^31 - 1 come from no tune (edited?)");
            ++report.edited_values;
        }
    }
    // Counted as stats counts them: every winner, and every device its rows name.
    report.dangling_winners = static_cast<int>(store.dangling_winners(""));
    report.devices_without_row = static_cast<int>(store.device_ids_without_row().size());
    if (report.edited_values > 0) {
        report.stopped_at_sizes = true;
        report.devices = static_cast<int>(db.integer("SELECT count(*) FROM devices"));
        report.winners = static_cast<int>(db.integer("SELECT count(*) FROM winners"));
        return report;
    }
    {
        // The binaries no winner names are the tuner's cache: one damaged there used to reach
        // the CUDA loader (the tuner now compiles it again and replaces it).
        auto q = db.query("SELECT cache_key, arch, lowered_name, cubin, cubin_checksum FROM binaries WHERE cache_key "
                          "NOT IN (SELECT binary_key FROM winners WHERE binary_key IS NOT NULL)");
        while (q.step()) {
            Binary cached;
            cached.arch = static_cast<int>(q.integer(1));
            cached.lowered_name = q.text(2);
            cached.cubin = q.blob(3);
            cached.cubin_checksum = q.text(4);
            ++report.binaries_checked;
            if (const std::string problem = cubin_problem(cached); !problem.empty())
                report.problems.push_back("cached binary " + q.text(0) + ": " + problem +
                                          " (sgemm-tune compiles it again when it next needs it)");
        }
    }
    for (const TuningStore::EditedDeviceRow& row : store.edited_device_rows()) {
        report.problems.push_back(edited_device_problem(row));
        ++report.edited_device_rows;
    }
    // By the id each row is stored under: an edited row's winners are reported above as
    // found by no lookup, and are still counted and checked here as any other.
    for (const TuningStore::DeviceRow& row : store.device_rows()) {
        const DeviceFingerprint& device = row.fields;
        ++report.devices;
        for (const WinnerWithBinary& wb : store.winners_with_binaries(row.stored_id)) {
            ++report.winners;
            const Winner& w = wb.winner;
            const std::string where = w.where();
            // A bad time leaves the winner's binary to be checked as any other's. An edited
            // row's SM count is not the device's: its times are not judged by it.
            const bool edited = row.stored_id != device.id();
            const std::string time_problem = winner_time_problem(w, edited ? nullptr : &device);
            if (!time_problem.empty()) report.problems.push_back(where + ": " + time_problem);
            // A value edited in by hand that no tune writes, which only a row's read-back finds:
            // where nothing else is wrong (an edited device row's winners' ids are already
            // said), as that would be said twice.
            const auto check_row = [&] {
                if (!time_problem.empty() || row.stored_id != device.id()) return;
                if (const std::string problem = exported_row_problem(device, wb); !problem.empty()) {
                    report.problems.push_back(where + ": an import would refuse its row: " + problem);
                    ++report.edited_values;
                }
            };
            if (w.kernel.is_cublas()) {
                if (const std::string problem = kernel_problem ? kernel_problem(w, device) : ""; !problem.empty())
                    report.problems.push_back(where + ": " + problem);
                else
                    check_row();
                continue;
            }
            if (!wb.binary) {
                report.problems.push_back(where + ": its binary " + w.binary_key + " is missing");
                continue;
            }
            ++report.binaries_checked;
            if (const std::string problem = binary_problem(*wb.binary, device); !problem.empty()) {
                report.problems.push_back(where + ": " + problem);
                continue;
            }
            // Whether it is the winner's own instantiation is for `kernel_problem` to say.
            if (const std::string problem = stored_binary_problem(store, w); !problem.empty()) {
                report.problems.push_back(where + ": " + problem);
                continue;
            }
            if (const std::string problem = kernel_problem ? kernel_problem(w, device) : ""; !problem.empty()) {
                report.problems.push_back(where + ": " + problem);
                continue;
            }
            check_row();
            if (!try_load || wb.binary->arch != gpu_sm) continue;
            if (const std::string problem = try_load(*wb.binary); !problem.empty())
                report.problems.push_back(where + ": loading it on the GPU failed: " + problem);
            else
                ++report.binaries_loaded;
        }
    }
    report.winners += report.dangling_winners;
    return report;
}

}  // namespace sgemm
