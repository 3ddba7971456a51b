// sgemm-db: inspect, share and maintain the tuning database.
//
// A thin front end over db/: each subcommand opens the store (read-only unless it
// writes), calls one db/ function and prints its answer as an aligned table for people or,
// with --json, as JSON for programs. The only logic here is what needs the GPU (the current
// device's fingerprint, loading cubins) or the kernel families (whether a kernel can run a
// shape, from src/records), which db/ must not depend on.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "db/csv.h"
#include "db/default_path.h"
#include "db/exchange.h"
#include "db/merge.h"
#include "db/prune.h"
#include "db/schema.h"
#include "db/selection.h"
#include "db/stats.h"
#include "db/verify.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/dispatch/catalog.h"
#include "src/dispatch/gemm_call.h"
#include "src/records/kernel_records.h"
#include "src/util/json.h"
#include "src/util/parse_number.h"
#include "src/util/text.h"
#include "tools/cli_output.h"
#include "tools/cli_database_path.h"
#include "tools/cli_input.h"
#include "tools/cli_parse.h"
#include "tools/cli_table.h"

namespace po = boost::program_options;
using namespace sgemm;

namespace {

// A wrong command line: exit 1 with a hint to --help.
struct UsageError : Error {
    using Error::Error;
};

std::string optional_fixed(const std::optional<double>& v, int digits) { return v ? fixed(*v, digits) : "-"; }

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(); }

Json shape_json(const ShapeKey& s) {
    return Json::object()
        .set("m", s.M)
        .set("n", s.N)
        .set("k", s.K)
        .set("trans", s.transposes())
        .set("precision", to_string(s.precision))
        .set("alignment", s.alignment);
}

Json winner_json(const Winner& w) {
    return Json::object()
        .set("device_id", w.device_id)
        .set("shape", shape_json(w.shape))
        .set("family", w.kernel.family)
        .set("params", params_text(w.kernel.params))
        .set("kernel", w.kernel.description)
        .set("ms", w.ms)
        .set("tflops", w.tflops)
        .set("cublas_ms", w.cublas_ms)
        .set("speedup", w.speedup)
        .set("tolerance", w.tolerance)
        .set("provenance", w.provenance)
        .set("narrowed_by", w.narrowed_by)
        .set("tuned_at", w.tuned_at);
}

// The fingerprint of the GPU this process would dispatch on, or nullopt without one. A GPU
// that CUDA fails to reach (a driver upgraded without a reboot) is said, and the command goes
// on with the file alone, as without a GPU: what it reads there is not the GPU's fault.
std::optional<DeviceFingerprint> current_gpu() {
    try {
        return fingerprint_of(use_device(0));
    } catch (const NoDeviceError&) {
        return std::nullopt;
    } catch (const CudaError& e) {
        std::fprintf(stderr, "sgemm-db: note: %s; going on without the GPU\n", printable_lines(e.what()).c_str());
        return std::nullopt;
    }
}

// A database read without its -wal file's commits (from a copy of the file alone) says so: a
// writer that stopped before its checkpoint left winners there that list, export and merge
// would otherwise pass over without a word.
void note_unread_wal(const TuningStore& store) {
    if (store.unread_wal_bytes() > 0)
        std::fprintf(stderr,
                     "sgemm-db: note: %s-wal (%lld bytes) may hold commits not yet in %s, which this read goes "
                     "without: it copies the file alone, as a user who may not write the file, its folder or "
                     "SQLite's files beside it does, so it sees the database as of its last checkpoint (a read "
                     "by a user who may write them brings the commits in)\n",
                     printable(store.path()).c_str(), static_cast<long long>(store.unread_wal_bytes()),
                     printable(store.path()).c_str());
}

struct Context {
    po::variables_map vm;
    std::vector<std::string> args;
    std::string db_path;
    bool json = false;
    std::chrono::milliseconds busy_timeout{TuningStore::kDefaultBusyTimeout};
    // Set by a command once it has committed a change to the database: a report that cannot
    // be written then says that the change stays.
    bool wrote = false;

    // A file of an older schema is read from an upgraded copy (OpenMode::ReadOnly), and
    // upgraded by a writer, after which builds older than this one no longer read it. Either
    // is said once, on stderr, so that standard output stays the report; `upgrade`, whose
    // report it is, passes say_upgrade false.
    TuningStore open(OpenMode mode, bool say_upgrade = true) const {
        TuningStore store(db_path, mode, busy_timeout);
        note_unread_wal(store);
        const int was = store.opened_version(), now = latest_schema_version();
        if (mode == OpenMode::ReadOnly && was < now)
            std::fprintf(stderr,
                         "note: %s has schema version %d: it was read from a copy in memory brought to version %d, "
                         "and the file was left as it is (sgemm-db upgrade, by a user who may write it, upgrades the file)\n",
                         printable(store.path()).c_str(), was, now);
        if (const std::string upgraded = upgrade_notice(store.path(), was);
            mode == OpenMode::ReadWrite && say_upgrade && !upgraded.empty())
            std::fprintf(stderr, "note: %s\n", printable(upgraded).c_str());
        return store;
    }
    // For writing, where only an existing database makes sense (prune, upgrade): opening for
    // writing would create one in a missing or empty file, and a mistyped path would then
    // report success.
    void check_existing() const {
        if (no_database_yet())
            throw DbError(std::filesystem::exists(db_path) ? printable(db_path) + " is empty, not a tuning database"
                                                           : "no tuning database at " + printable(db_path));
    }
    // Whether opening for writing would make the database: its file is missing or empty. A
    // path that cannot be looked along is not missing: the store's open says why.
    bool no_database_yet() const {
        std::error_code ec;
        if (!std::filesystem::exists(db_path, ec)) return !ec;
        return std::filesystem::file_size(db_path, ec) == 0 && !ec;
    }
    // Before writing where a new database may be made (import, merge): a folder named by --db
    // or SGEMM_DB that is not there is refused before anything is read.
    void check_folder_for_a_new_database() const {
        if (const std::string why = missing_folder_of_a_named_database(vm, db_path); !why.empty()) throw UsageError(why);
    }

    // The one --device, resolved in `store`; empty when not given.
    std::string device(TuningStore& store) const {
        if (!vm.count("device")) return "";
        const auto& ids = vm["device"].as<std::vector<std::string>>();
        if (ids.size() != 1) throw UsageError("give one --device here");
        return store.resolve_device(ids.front());
    }

    int size(std::size_t i, const char* name, bool zero_allowed) const {
        try {
            return parse_gemm_size(args.at(i), name, zero_allowed ? 0 : 1);
        } catch (const Error& e) {
            throw UsageError(e.what());
        }
    }

    // The shape key of "M N K" and --trans, --precision, --align. Without --align, the class
    // of tightly packed matrices: the one sgemm-tune stores the shape under. Sizes of 0 only
    // where `zeros_allowed` (explain: dispatch takes them, and computes no product).
    ShapeKey shape(bool zeros_allowed = false) const {
        ShapeKey s;
        s.M = size(0, "M", zeros_allowed);
        s.N = size(1, "N", zeros_allowed);
        s.K = size(2, "K", zeros_allowed);
        // A value that is no transpose or precision is a slip in the line, as a bad --align is.
        try {
            parse_transposes(vm["trans"].as<std::string>(), s);
            s.precision = parse_gemm_precision(vm["precision"].as<std::string>());
        } catch (const Error& e) {
            throw UsageError(e.what());
        }
        s.alignment = vm.count("align") ? vm["align"].as<int>() : packed_alignment(s);
        if (!valid_alignment_class(s.alignment)) throw UsageError("--align must be 16, 8 or 4");
        return s;
    }
};

// Where an empty listing looked: " in FILE", or " of device ID in FILE" with --device, which
// leaves the other devices' rows out.
std::string where(Context& ctx, TuningStore& store) {
    const std::string device = ctx.device(store);
    return (device.empty() ? "" : " of device " + printable(device)) + " in " + printable(store.path());
}

// Each device row's fields by the id the row is stored under, which its winners and misses
// name, even for a row edited by hand: the GPU and sgemm version the tables show beside them.
// A build's dispatch reads only its own version's rows, so two devices of one GPU (before and
// after an upgrade) are told apart by the version.
std::map<std::string, DeviceFingerprint> devices_by_stored_id(TuningStore& store) {
    std::map<std::string, DeviceFingerprint> devices;
    for (TuningStore::DeviceRow& row : store.device_rows()) devices.emplace(row.stored_id, std::move(row.fields));
    return devices;
}

// A row's device as list, show and misses name it. A row whose device row was deleted by hand
// (verify names it) has none: "(no device row)", version "?" (null in JSON), where a default
// row's version would pass for this build's.
struct RowDevice {
    const DeviceFingerprint* row;
    RowDevice(const std::map<std::string, DeviceFingerprint>& devices, const std::string& id) {
        const auto found = devices.find(id);
        row = found == devices.end() ? nullptr : &found->second;
    }
    std::string gpu() const { return row ? row->gpu_name : "(no device row)"; }
    std::string version() const { return row ? row->library_version : "?"; }
    Json version_json() const { return row ? Json(row->library_version) : Json(); }
};

int cmd_list(Context& ctx) {
    TuningStore store = ctx.open(OpenMode::ReadOnly);
    const std::string device_id = ctx.device(store);
    const std::vector<Winner> winners = store.winners(device_id);
    const std::map<std::string, DeviceFingerprint> devices = devices_by_stored_id(store);
    // A winner whose kernel row was deleted by hand has no kernel to show: said, so that the
    // list agrees with stats' and verify's counts of winners. On standard error, as JSON's
    // output must stay JSON.
    const std::int64_t hidden = store.winners_of_missing_kernels(device_id);
    const auto say_winners_not_listed = [hidden] {
        if (hidden == 1)
            std::fprintf(stderr, "sgemm-db: 1 winner is not listed: the kernel row it names is missing (deleted by "
                                 "hand?); sgemm-db verify names it\n");
        else if (hidden > 1)
            std::fprintf(stderr, "sgemm-db: %lld winners are not listed: the kernel row each names is missing (deleted "
                                 "by hand?); sgemm-db verify names them\n", static_cast<long long>(hidden));
    };
    if (ctx.json) {
        Json out = Json::array();
        for (const Winner& w : winners)
            out.push(winner_json(w).set("library_version", RowDevice(devices, w.device_id).version_json()));
        std::printf("%s\n", out.dump().c_str());
        say_winners_not_listed();
        return 0;
    }
    // "search": whether the search that chose the winner was narrowed, which `show` details:
    // the next sgemm-tune run that searches in full tunes such a shape again.
    Table table({"device", "gpu", "sgemm", "M", "N", "K", "trans", "prec", "align", "kernel", "ms", "TFLOPS",
                 "cuBLAS ms", "speedup", "search", "tuned at"});
    for (const Winner& w : winners) {
        const RowDevice device(devices, w.device_id);
        table.add({w.device_id.substr(0, 8), device.gpu(), device.version(), std::to_string(w.shape.M),
                   std::to_string(w.shape.N), std::to_string(w.shape.K), w.shape.transposes(),
                   to_string(w.shape.precision), std::to_string(w.shape.alignment), w.kernel.description,
                   fixed(w.ms, 4), fixed(w.tflops, 2), fixed(w.cublas_ms, 4), fixed(w.speedup, 2) + "x",
                   w.narrowed_by.empty() ? "full" : "narrowed", w.tuned_at});
    }
    if (table.empty())
        std::printf("no winners%s%s\n", hidden > 0 ? " that can be listed" : "", where(ctx, store).c_str());
    else
        table.print();
    say_winners_not_listed();
    return 0;
}

int cmd_show(Context& ctx) {
    const ShapeKey shape = ctx.shape();
    TuningStore store = ctx.open(OpenMode::ReadOnly);
    const std::string device = ctx.device(store);
    const std::vector<Measurement> rows = store.measurements(device, shape);
    // The shape's stored winners, one a device, measured or not: an import or a merge brings
    // a winner without the measurements of its search, and a winner's time is its own
    // re-timing against cuBLAS, not the search's median of its kernel that the table shows.
    // Each with its device's sgemm version: after an upgrade one GPU has a device of each, and
    // the lines are alike but for the id.
    // Those of a device whose row was deleted by hand too, as list shows them.
    std::vector<Winner> winners;
    const std::map<std::string, DeviceFingerprint> devices = devices_by_stored_id(store);
    std::vector<std::string> ids;
    for (const auto& [id, fields] : devices) ids.push_back(id);
    for (std::string& id : store.device_ids_without_row()) ids.push_back(std::move(id));
    for (const std::string& id : ids)
        if (device.empty() || id == device)
            if (std::optional<Winner> w = store.find_winner(id, shape)) winners.push_back(std::move(*w));
    if (ctx.json) {
        Json measured = Json::array();
        for (const Measurement& m : rows)
            measured.push(Json::object()
                              .set("device_id", m.device_id)
                              .set("family", m.kernel.family)
                              .set("params", params_text(m.kernel.params))
                              .set("kernel", m.kernel.description)
                              .set("median_ms", optional_json(m.median_ms))
                              .set("min_ms", optional_json(m.min_ms))
                              .set("max_ms", optional_json(m.max_ms))
                              .set("runs", m.runs)
                              .set("tflops", optional_json(m.tflops))
                              .set("error_norm", optional_json(m.error_norm))
                              .set("max_error_u", optional_json(m.max_error_u))
                              .set("rms_error_u", optional_json(m.rms_error_u))
                              .set("valid", m.valid)
                              .set("invalid_reason", m.invalid_reason)
                              .set("sm_clock_mhz", m.sm_clock_mhz ? Json(*m.sm_clock_mhz) : Json())
                              .set("measured_at", m.measured_at)
                              .set("tuner_version", m.tuner_version));
        Json stored = Json::array();
        for (const Winner& w : winners)
            stored.push(winner_json(w).set("library_version", RowDevice(devices, w.device_id).version_json()));
        std::printf("%s\n", Json::object()
                                 .set("shape", shape_json(shape))
                                 .set("winners", std::move(stored))
                                 .set("measurements", std::move(measured))
                                 .dump()
                                 .c_str());
        return 0;
    }
    std::vector<std::string> winner_lines;
    for (const Winner& w : winners) {
        const RowDevice device_of(devices, w.device_id);
        const std::string version = device_of.version();
        winner_lines.push_back("the stored winner of device " + printable(w.device_id.substr(0, 8)) +
                               (!device_of.row              ? " (no device row, so no dispatch reads it)"
                                : version == SGEMM_VERSION ? ""
                                                           : " (sgemm " + printable(version) +
                                                                 ", whose rows this build's dispatch does not read)") +
                               ": " +
                               printable(w.kernel.description) + ", " + fixed(w.ms, 4) + " ms (cuBLAS " +
                               fixed(w.cublas_ms, 4) + " ms, " + fixed(w.speedup, 2) + "x), " + printable(w.provenance) +
                               (w.narrowed_by.empty() ? "" : "; its search was narrowed by " + printable(w.narrowed_by) +
                                                                 ", so the next sgemm-tune run that searches in full "
                                                                 "tunes the shape again"));
    }
    if (rows.empty()) {
        std::printf("no measurements of %s%s\n", shape.to_string().c_str(), where(ctx, store).c_str());
        for (const std::string& line : winner_lines) std::printf("%s\n", line.c_str());
        return 0;
    }
    std::printf("%s, best first (* the stored winner's kernel, at its fastest valid run)\n", shape.to_string().c_str());
    for (const std::string& line : winner_lines) std::printf("%s\n", line.c_str());
    // error: the relative Frobenius norm; u max/rms: the check's scaled errors (tuner/accuracy.h).
    Table table({"", "device", "kernel", "median ms", "min ms", "max ms", "runs", "TFLOPS", "error", "u max/rms", "MHz",
                 "verdict", "measured at"});
    std::set<std::string> marked;  // devices whose winner's row is marked: its fastest valid run
    for (const Measurement& m : rows) {
        const auto w = std::find_if(winners.begin(), winners.end(),
                                    [&](const Winner& x) { return x.device_id == m.device_id; });
        const bool chosen = w != winners.end() && w->kernel == m.kernel && m.valid && marked.insert(m.device_id).second;
        char error[32] = "-";
        if (m.error_norm) std::snprintf(error, sizeof error, "%.2e", *m.error_norm);
        const std::string scaled = m.max_error_u && m.rms_error_u
                                       ? fixed(*m.max_error_u, 1) + "/" + fixed(*m.rms_error_u, 2)
                                       : "-";
        table.add({chosen ? "*" : "", m.device_id.substr(0, 8), m.kernel.description, optional_fixed(m.median_ms, 4),
                   optional_fixed(m.min_ms, 4), optional_fixed(m.max_ms, 4), std::to_string(m.runs),
                   optional_fixed(m.tflops, 2), error, scaled, m.sm_clock_mhz ? std::to_string(*m.sm_clock_mhz) : "-",
                   m.valid ? "valid" : "INVALID: " + m.invalid_reason, m.measured_at});
    }
    table.print();
    return 0;
}

// For explain on a GPU without rows: "; the file holds rows of 1 earlier build of this GPU
// (...)", naming each, or "" where it holds none. After an upgrade of sgemm, the driver, CUDA
// or NVRTC those rows are there and unused, which the user should not have to guess.
std::string rows_of_earlier_builds(TuningStore& store, const DeviceFingerprint& gpu) {
    const std::vector<TuningStore::DeviceRow> earlier = earlier_builds_of(store, gpu);
    if (earlier.empty()) return "";
    std::string builds;
    bool with_misses = false;
    for (const TuningStore::DeviceRow& row : earlier) {
        builds += (builds.empty() ? "" : ", ") + earlier_build_label(row, gpu);
        with_misses = with_misses || !store.misses(row.stored_id).empty();
    }
    return "; the file holds rows of " + count_of(earlier.size(), "earlier build", "earlier builds") +
           " of this GPU, which this build's dispatch does not read (" + builds + "): tune again with this build" +
           (with_misses ? " (sgemm-tune --from-misses tunes their misses too)" : "");
}

// "This device" for explain: --device, else the GPU of this machine, else the file's only
// device. The GPU comes before the file's only device because it is where dispatch would
// run; without a GPU the answer is for the file's device.
struct ExplainedDevice {
    std::string id;
    std::optional<DeviceFingerprint> row;  // its row in the file, if it has one
    std::optional<DeviceFingerprint> gpu;  // this machine's GPU, where the device is that
    // Rows name it, but its row was deleted by hand: dispatch finds none of them.
    bool row_missing = false;
};
ExplainedDevice explain_device(Context& ctx, TuningStore& store) {
    const std::vector<std::string> without_row = store.device_ids_without_row();
    const auto explained = [&without_row](std::string id, std::optional<DeviceFingerprint> row,
                                          std::optional<DeviceFingerprint> gpu) {
        const bool row_missing = !row && std::find(without_row.begin(), without_row.end(), id) != without_row.end();
        return ExplainedDevice{std::move(id), std::move(row), std::move(gpu), row_missing};
    };
    if (const std::string id = ctx.device(store); !id.empty()) return explained(id, store.find_device(id), std::nullopt);
    if (const std::optional<DeviceFingerprint> gpu = current_gpu()) return explained(gpu->id(), store.find_device(gpu->id()), gpu);
    // By the ids the rows are stored under, which --device and list name: a device whose row
    // was deleted by hand too, as stats lists it.
    const std::vector<TuningStore::DeviceRow> devices = store.device_rows();
    if (devices.size() == 1 && without_row.empty()) return explained(devices.front().stored_id, devices.front().fields, std::nullopt);
    if (devices.empty() && without_row.size() == 1) return explained(without_row.front(), std::nullopt, std::nullopt);
    if (devices.empty() && without_row.empty())
        throw UsageError("no GPU is visible and " + printable(store.path()) + " holds no device: nothing has been tuned into "
                         "it, or prune removed what was, so there is nothing to explain (sgemm-tune fills it on a GPU)");
    std::string list;
    for (const TuningStore::DeviceRow& row : devices) list += row.listing_line();
    for (const std::string& id : without_row) list += TuningStore::listing_line_without_row(id);
    throw UsageError("no GPU is visible and " + printable(store.path()) + " holds " +
                     std::to_string(devices.size() + without_row.size()) + " devices: name one with --device" + list);
}

int cmd_explain(Context& ctx) {
    const ShapeKey shape = ctx.shape(/*zeros_allowed=*/true);
    TuningStore store = ctx.open(OpenMode::ReadOnly);
    // A shape that computes no product is decided without a winner, on every device; the file
    // and a --device are still checked, as for any other shape.
    if (const std::string launch = launch_without_product(shape); !launch.empty()) {
        ctx.device(store);
        const char* kind = empty_product(shape) ? "empty" : "scale_c";
        const std::string why = "no product is computed, so dispatch looks up no winner on any device";
        if (ctx.json) {
            // As explain's text: an empty product's key is its sizes alone.
            const Json shape_fields = empty_product(shape)
                                          ? Json::object().set("m", shape.M).set("n", shape.N).set("k", shape.K)
                                          : shape_json(shape);
            Json out = Json::object();
            out.set("device_id", Json()).set("shape", shape_fields).set("decision", kind).set("launch", launch);
            out.set("winner", Json()).set("reason", why).set("compiled_at_create", Json()).set("stands_in_for", Json());
            std::printf("%s\n", out.dump().c_str());
            return 0;
        }
        std::printf("shape     %s\ndecision  %s\nlaunch    %s\nwhy       %s\n", explained_shape(shape).c_str(), kind,
                    launch.c_str(), why.c_str());
        return 0;
    }
    const ExplainedDevice explained = explain_device(ctx, store);
    const std::string& device_id = explained.id;
    const std::optional<DeviceFingerprint>& device = explained.row;
    const bool row_missing = explained.row_missing;
    // The winners dispatch loads for this device (src/dispatch/catalog.h): the same ones are
    // left out, for the same reasons.
    Catalog catalog;
    std::string left_out;
    // A device row of another library version is never this build's GPU: dispatch computes
    // its fingerprint with its own version, so it never reads these rows.
    const bool other_version = device && device->library_version != SGEMM_VERSION;
    if (device && !other_version) {
        catalog = load_catalog(store, *device, shape.precision, ctx.vm.count("deterministic") > 0);
        for (const SkippedWinner& s : catalog.skipped)
            if (s.winner.shape == shape)
                left_out = "the stored winner for this shape, " + s.winner.kernel.description + ", is left out: " + s.why + "; ";
    }
    Selection selection;
    std::string launch = "the fallback policy's choice (cuBLAS by default)";
    std::string compiled_at_create;  // why the winner's stored binary cannot serve, if it cannot
    if (other_version) {
        // What to do hangs on which build the rows are for: an older one's go with prune
        // --stale, a newer one's (or this version's under another label) stay for that build.
        const std::string what_to_do =
            superseded(device->library_version, SGEMM_VERSION)
                ? "tune again with this build: sgemm-tune --from-misses tunes an earlier build's misses for it, so run "
                  "it before sgemm-db prune --stale removes older builds' rows, their misses with them"
                : "they are a newer build's, or another label's of this version: that build reads them, and sgemm-db "
                  "prune --stale keeps them; for this build, tune with it";
        selection.reason = "device " + device_id.substr(0, 8) + " was tuned by sgemm " + device->library_version +
                           "; dispatch " + SGEMM_VERSION + " reads only the rows of its own version, so every shape "
                           "falls back (" + what_to_do + ")";
    } else if (device) {
        // Dispatch's own decision, with the split-K workspace it gives each stream; the
        // fallback is left to the caller's policy, as `launch` says. A winner's kernel is what
        // dispatch launches: re-split where its partials would overflow the workspace.
        const Decision decision = decide(catalog, shape, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{device->sm()},
                                         workspace_bytes_needed(catalog));
        selection = decision.selection;
        if (selection.winner) {
            selection.reason = decision.reason;
            launch = decision.kernel.description;
            // A stored binary that cannot serve (damaged, missing, another build's, or none
            // for a deterministic stand-in) costs each create a compile (src/dispatch/kernel_set.h).
            if (const auto unusable = catalog.unusable_binaries.find(selection.winner->binary_key);
                unusable != catalog.unusable_binaries.end())
                compiled_at_create = unusable->second;
        }
        selection.reason = left_out + selection.reason;
        if (!compiled_at_create.empty())
            selection.reason += "; no stored binary serves it (" + compiled_at_create +
                                "), so dispatch compiles the kernel at each create";
    } else if (row_missing)
        selection.reason = "device " + device_id.substr(0, 8) + "'s row is missing from " + store.path() +
                           " (deleted by hand?): dispatch finds none of the rows that name it, so every shape falls "
                           "back (sgemm-db verify names them)";
    else
        selection.reason = "this GPU (device " + device_id + ") has no rows in " + store.path() +
                           ": nothing tuned on it is used, so every shape falls back" +
                           (explained.gpu ? rows_of_earlier_builds(store, *explained.gpu) : "");
    static const char* kinds[] = {"exact", "nearest", "fallback"};
    const char* kind = kinds[static_cast<int>(selection.kind)];
    if (ctx.json) {
        Json out = Json::object();
        out.set("device_id", device_id).set("shape", shape_json(shape)).set("decision", kind).set("launch", launch);
        // A winner explain names is of the device's own rows, of this build's version; named as
        // list and show name it.
        const auto with_version = [&device](Json w) { return w.set("library_version", device->library_version); };
        Json winner = selection.winner ? with_version(winner_json(*selection.winner)) : Json();
        // With --deterministic, "winner" may be a stand-in, never timed: its figures are null,
        // and "stands_in_for" is the stored winner it replaces, with the tuned kernel's.
        Json replaces;
        for (const DeterministicStandIn& s : catalog.stand_ins)
            if (selection.winner && s.atomic.shape == selection.winner->shape) {
                replaces = with_version(winner_json(s.atomic));
                for (const char* measured : {"ms", "tflops", "speedup", "tuned_at"}) winner.set(measured, Json());
            }
        out.set("winner", winner).set("reason", selection.reason);
        out.set("compiled_at_create", compiled_at_create.empty() ? Json() : Json(compiled_at_create));
        out.set("stands_in_for", replaces);
        std::printf("%s\n", out.dump().c_str());
        return 0;
    }
    const std::string described = device        ? printable(device->describe())
                                  : row_missing ? "(no device row)"
                                                : "(not in the database)";
    std::printf("device    %s  %s\n", printable(device_id).c_str(), described.c_str());
    std::printf("shape     %s\n", shape.to_string().c_str());
    std::printf("decision  %s\n", kind);
    std::printf("launch    %s\n", printable(launch).c_str());
    std::printf("why       %s\n", printable(selection.reason).c_str());
    return 0;
}

int cmd_stats(Context& ctx) {
    TuningStore store = ctx.open(OpenMode::ReadOnly);
    const StoreStats s = store_stats(store);
    // An older file is read from an upgraded copy: its version and size are the file's.
    const std::int64_t file_bytes = store.opened_version() < latest_schema_version()
                                        ? static_cast<std::int64_t>(std::filesystem::file_size(store.path()))
                                        : s.file_bytes;
    if (ctx.json) {
        Json devices = Json::array();
        for (const DeviceStats& d : s.devices)
            devices.push(Json::object()
                             .set("device_id", d.id)
                             .set("description", d.device ? Json(d.device->describe()) : Json())
                             .set("winners", d.winners)
                             .set("cublas_winners", d.cublas_winners)
                             .set("measurements", d.measurements)
                             .set("invalid_measurements", d.invalid_measurements)
                             .set("missed_shapes", d.missed_shapes)
                             .set("misses", d.misses));
        Json out = Json::object();
        out.set("path", store.path()).set("schema_version", store.opened_version()).set("file_bytes", file_bytes);
        out.set("kernels", s.kernels).set("binaries", s.binaries).set("binary_bytes", s.binary_bytes);
        out.set("binary_hits", s.binary_hits).set("hit_rate", s.hit_rate()).set("devices", devices);
        std::printf("%s\n", out.dump().c_str());
        return 0;
    }
    std::printf("file      %s (%s KiB, schema version %d)\n", printable(store.path()).c_str(),
                fixed(file_bytes / 1024.0, 0).c_str(), store.opened_version());
    std::printf("kernels   %lld\n", static_cast<long long>(s.kernels));
    std::printf("binaries  %lld (%s KiB of cubins), %lld cache hits, hit rate %s%%\n",
                static_cast<long long>(s.binaries), fixed(s.binary_bytes / 1024.0, 0).c_str(),
                static_cast<long long>(s.binary_hits), fixed(100 * s.hit_rate(), 1).c_str());
    std::printf("\n");
    Table table({"device", "winners", "cuBLAS wins", "measured", "invalid", "missed shapes", "misses", "fingerprint"});
    for (const DeviceStats& d : s.devices)
        table.add({d.id, std::to_string(d.winners), std::to_string(d.cublas_winners), std::to_string(d.measurements),
                   std::to_string(d.invalid_measurements), std::to_string(d.missed_shapes), std::to_string(d.misses),
                   d.device ? d.device->describe() : "(no device row: deleted by hand? sgemm-db verify names its rows)"});
    if (table.empty())
        std::printf("no devices\n");
    else
        table.print();
    return 0;
}

int cmd_misses(Context& ctx) {
    TuningStore store = ctx.open(OpenMode::ReadOnly);
    const std::vector<Miss> misses = store.misses(ctx.device(store));
    const std::map<std::string, DeviceFingerprint> devices = devices_by_stored_id(store);
    // A miss stays as counted after a tune, an import or a merge brings the shape a winner
    // (its count still weighs the shape): whether one has come since is said beside it. A
    // later build of the same GPU counts too: its --from-misses tunes this build's misses.
    const auto tuned_since = [&store, &devices](const Miss& m) {
        if (store.find_winner(m.device_id, m.shape)) return true;
        const DeviceFingerprint* missed_on = RowDevice(devices, m.device_id).row;
        for (const auto& [id, device] : devices)
            if (missed_on && earlier_build(*missed_on, device) && store.find_winner(id, m.shape)) return true;
        return false;
    };
    if (ctx.json) {
        Json out = Json::array();
        for (const Miss& m : misses)
            out.push(Json::object()
                         .set("device_id", m.device_id)
                         .set("library_version", RowDevice(devices, m.device_id).version_json())
                         .set("shape", shape_json(m.shape))
                         .set("count", static_cast<long long>(m.count))
                         .set("first_seen", m.first_seen)
                         .set("last_seen", m.last_seen)
                         .set("winner_since", tuned_since(m)));
        std::printf("%s\n", out.dump().c_str());
        return 0;
    }
    Table table({"device", "gpu", "sgemm", "M", "N", "K", "trans", "prec", "align", "count", "first seen", "last seen",
                 "winner since"});
    for (const Miss& m : misses) {
        const RowDevice device(devices, m.device_id);
        table.add({m.device_id.substr(0, 8), device.gpu(), device.version(), std::to_string(m.shape.M),
                   std::to_string(m.shape.N), std::to_string(m.shape.K), m.shape.transposes(),
                   to_string(m.shape.precision), std::to_string(m.shape.alignment), std::to_string(m.count),
                   m.first_seen, m.last_seen, tuned_since(m) ? "yes" : "no"});
    }
    if (table.empty())
        std::printf("no misses%s\n", where(ctx, store).c_str());
    else
        table.print();
    return 0;
}

// The kernel families' judgement of a stored winner whose binary is sound (db/verify.h's
// KernelProblem), for verify, export, import and merge. A row of this build's templates that
// dispatch would leave out,
// whose binary is not its own instantiation, or whose description is not its parameters'
// (list and explain would show a kernel that does not run) was damaged: edited by hand, or
// imported from such a file. A row whose template hash is none of this build's families' is
// another build's, not judged here, but for cuBLAS, which has no templates, and but for one
// whose binary key only this build's sources give (its hash edited: edited_sources_hash).
std::string kernel_problem(const Winner& w, const DeviceFingerprint& device) {
    const Arch arch{device.sm()};
    const auto description_problem = [&](const std::string& own) {
        return w.kernel.description == own ? std::string()
                                           : "its description '" + w.kernel.description + "' is not its kernel's, '" + own + "'";
    };
    if (w.kernel.is_cublas()) {
        // cuBLAS has no parameters or sources of ours: a row with either would be a second
        // cuBLAS kernel row that list and show could not tell from the real one.
        std::string given;  // of what cuBLAS has none
        if (!w.kernel.params.empty()) given = "parameters '" + params_text(w.kernel.params) + "'";
        if (!w.kernel.template_hash.empty())
            given += (given.empty() ? "" : " and ") + std::string("sources '") + w.kernel.template_hash + "'";
        if (!given.empty()) return "a cuBLAS winner with " + given + ", which cuBLAS has none of";
        return description_problem(KernelRef::cublas().description);
    }
    const std::vector<std::string>& ours = all_family_sources_hashes();
    if (std::find(ours.begin(), ours.end(), w.kernel.template_hash) == ours.end()) return edited_sources_hash(w, device);
    if (const std::string why = winner_unusable(w, arch); !why.empty()) return "dispatch would leave it out: " + why;
    if (const std::string why = binary_mismatch(w, device); !why.empty()) return why;
    return description_problem(family_of(w.kernel)->describe(w.kernel.params));
}

// An export that left out damaged winners (each listed) and wrote the rest, or an import or
// merge that refused some: the status that says the command did part of its work.
constexpr int kSomeWinnersLeftOut = 3;

int cmd_export(Context& ctx) {
    ExchangeFormat format = parse_exchange_format(ctx.vm["format"].as<std::string>());
    // --json, which every command takes for "JSON for programs", means --format json here.
    if (ctx.json) {
        if (!ctx.vm["format"].defaulted() && format != ExchangeFormat::json)
            throw UsageError("--json asks for JSON and --format for " + single_quoted(ctx.vm["format"].as<std::string>()));
        format = ExchangeFormat::json;
    }
    const bool to_file = ctx.vm.count("output") > 0;
    const std::string path = to_file ? ctx.vm["output"].as<std::string>() : "";
    if (to_file) {
        try {
            check_output_is_not_database(path, "output", ctx.db_path);  // first: the more telling message
            check_output_file(path, "output");
        } catch (const po::error& e) {
            throw UsageError(e.what());
        }
    }
    TuningStore store = ctx.open(OpenMode::ReadOnly);
    const std::string device = ctx.device(store);
    // To a file, the whole export first: a database that fails partway leaves an earlier file
    // as it was.
    std::ostringstream buffered;
    const ExportSummary summary =
        export_winners(store, to_file ? static_cast<std::ostream&>(buffered) : std::cout, format, device, kernel_problem);
    // As import and merge say what they refused: the file holds the rest. Said before the file
    // is written, whose failure would otherwise be all that is said.
    if (const std::string note = too_large_to_import(summary); !note.empty())
        std::fprintf(stderr, "sgemm-db: note: %s\n", note.c_str());
    for (const std::string& why : summary.left_out)
        std::fprintf(stderr, "sgemm-db: export left out %s (sgemm-db verify lists what is damaged)\n",
                     printable(why).c_str());
    // Nor does an export that left out every winner replace an earlier file with an empty one:
    // that would lose a good earlier export, and import the emptiness elsewhere without a word.
    const bool nothing_written = to_file && summary.exported == 0 && !summary.left_out.empty();
    if (to_file && !nothing_written) write_output_file(path, buffered.str());
    if (nothing_written) {
        std::error_code no_throw;
        std::fprintf(stderr, "sgemm-db: export left out every winner, so %s is not written%s\n", printable(path).c_str(),
                     std::filesystem::exists(path, no_throw) ? " (it keeps what it held)" : "");
    }
    return summary.left_out.empty() ? 0 : kSomeWinnersLeftOut;
}

// The winners an import or merge took (added, or replacing one) whose device is of another
// sgemm version: they are kept for builds of that version, and this build's dispatch never
// reads them, which the report says rather than leave the user to find them unused.
int taken_of_other_versions(const MergeSummary& s) {
    int n = 0;
    for (const WinnerOffer& offer : s.winners)
        n += (offer.outcome == WinnerOffer::Outcome::Added || offer.outcome == WinnerOffer::Outcome::Replaced) &&
             offer.library_version != SGEMM_VERSION;
    return n;
}

// `source_version`: the schema version of a merge's source database (an older one was read
// from a copy brought to this build's); none for an import's CSV.
void print_merge(const Context& ctx, const MergeSummary& s, const std::string& source,
                 std::optional<int> source_version) {
    using O = WinnerOffer::Outcome;
    static const char* names[] = {"added", "replaced", "kept", "refused"};
    if (ctx.json) {
        Json changes = Json::array();
        for (const WinnerOffer& offer : s.winners) {
            Json c = Json::object();
            c.set("outcome", names[static_cast<int>(offer.outcome)]).set("incoming", winner_json(offer.incoming));
            c.set("previous", offer.previous ? winner_json(*offer.previous) : Json()).set("reason", offer.reason);
            changes.push(c);
        }
        Json out = Json::object();
        out.set("source", source).set("devices_added", s.devices_added).set("winners_added", s.count(O::Added));
        out.set("winners_replaced", s.count(O::Replaced)).set("winners_kept", s.count(O::Kept));
        out.set("winners_refused", s.count(O::Refused)).set("binaries_added", s.binaries_added);
        out.set("measurements_added", s.measurements_added).set("misses_merged", s.misses_merged);
        out.set("checksums_taken", s.checksums_taken).set("winners", changes);
        if (source_version) out.set("source_schema_version", *source_version);
        out.set("winners_taken_of_other_versions", taken_of_other_versions(s));
        std::printf("%s\n", out.dump().c_str());
        return;
    }
    for (const WinnerOffer& offer : s.winners) {
        const Winner& in = offer.incoming;
        char outcome[16];
        std::snprintf(outcome, sizeof outcome, "%-9s", names[static_cast<int>(offer.outcome)]);
        std::string line = outcome + in.device_id.substr(0, 8) + " " + in.shape.to_string() + ": ";
        const std::string theirs = in.kernel.description + " " + fixed(in.ms, 4) + " ms";
        const std::string ours = offer.previous ? offer.previous->kernel.description + " " + fixed(offer.previous->ms, 4) + " ms" : "";
        switch (offer.outcome) {
            case O::Added: line += theirs; break;
            case O::Replaced: line += ours + " -> " + theirs; break;
            case O::Kept: line += ours + " (theirs: " + theirs + ")"; break;
            case O::Refused: line += theirs + ": " + offer.reason; break;
        }
        std::printf("%s\n", printable(line).c_str());
    }
    if (source_version && *source_version < latest_schema_version())
        std::printf("%s has schema version %d: it was read from a copy in memory brought to version %d, and the "
                    "file was left as it is\n",
                    printable(source).c_str(), *source_version, latest_schema_version());
    std::printf("from %s: %d devices added; winners %d added, %d replaced, %d kept, %d refused; %d binaries and %d "
                "measurements added; %d miss rows (one per recorder and shape) added or updated\n",
                printable(source).c_str(), s.devices_added, s.count(O::Added), s.count(O::Replaced), s.count(O::Kept),
                s.count(O::Refused), s.binaries_added, s.measurements_added, s.misses_merged);
    if (s.checksums_taken > 0)
        std::printf("%d binaries stored without a checksum took the one that came with the same bytes\n",
                    s.checksums_taken);
    if (const int others = taken_of_other_versions(s); others > 0)
        std::printf("%d of the winners taken are of other sgemm versions than this build's %s, whose dispatch reads "
                    "only its own version's rows (tune with this build to use those shapes here)\n",
                    others, SGEMM_VERSION);
}

// The judge of a winner offered by import or merge into `store`: kernel_problem, and a row
// of this build's own version tuned with other sources of its family (or of a family this
// build lacks) is refused where it would replace a winner this build runs: faster, it took
// the shape from this build's dispatch, which leaves it out (a user's pass found such an
// import reported as a success, and verify failing after it). Elsewhere such rows come in as
// they are (an identical copy, a shape without a winner here, other versions' rows).
KernelProblem offered_kernel_problem(TuningStore& store) {
    return [&store](const Winner& w, const DeviceFingerprint& device) -> std::string {
        if (const std::string problem = kernel_problem(w, device); !problem.empty()) return problem;
        if (w.kernel.is_cublas() || device.library_version != SGEMM_VERSION || built_from_these_sources(w.kernel))
            return "";
        const std::optional<Winner> ours = store.find_winner(w.device_id, w.shape);
        if (!ours || ours->ms <= w.ms || !winner_unusable(*ours, Arch{device.sm()}).empty()) return "";
        const std::string tuned_with = family_of(w.kernel) ? "other " + w.kernel.family + " sources than this build's"
                                                           : "family " + w.kernel.family + ", which this build lacks";
        return "it would replace " + ours->kernel.description + ", which this build runs, with a winner of " +
               tuned_with + " (this build's version, " + device.library_version + "), which its dispatch leaves out";
    };
}

// What a script sees of an import or merge: 0 when every winner was taken or weighed, 3 when
// some were refused (listed as such) while the rest went in.
int merge_status(const MergeSummary& summary) {
    return summary.count(WinnerOffer::Outcome::Refused) > 0 ? kSomeWinnersLeftOut : 0;
}

// Makes a writing command's change to the database: `change(store, trial)` makes it in a
// store, and `report` prints its summary. Opening a database of an older schema to write
// upgrades it, after which builds that read only an older schema no longer read it, and
// opening none makes one. So where either would happen, the change is first made in a trial (OpenMode::Trial, a
// copy in memory): a change that fails leaves the file as it was (a user's pass found a prune
// of an unknown device, and a merge of the file into itself, upgrading it before they
// failed), and so does one that `takes_nothing(summary, version)` says changed nothing that
// the file is to get; the trial's summary is reported then. Where there is no file, the trial
// that took something is the new database, written whole: a write that fails (a full disk)
// leaves no file, where one made in place would stay with SQLite's header page alone, or an
// empty schema. A database the command could not write is refused first, as the writer would
// refuse it.
template <class Change, class TakesNothing, class Report>
auto change_database(Context& ctx, Change change, TakesNothing takes_nothing, Report report) {
    const int version = check_writable_database(ctx.db_path, ctx.busy_timeout);
    if (version < latest_schema_version()) {
        TuningStore trial(ctx.db_path, OpenMode::Trial, ctx.busy_timeout);
        const auto tried = change(trial, true);
        const bool nothing_taken = takes_nothing(tried, version);
        if (version == 0 && !nothing_taken && trial.publish_as_new_file(ctx.db_path)) {
            ctx.wrote = true;
            report(tried);
            return tried;
        }
        if (nothing_taken) {
            report(tried);
            if (version == 0)
                std::fprintf(stderr, "sgemm-db: nothing changed, so no database was made at %s\n",
                             printable(ctx.db_path).c_str());
            else
                std::fprintf(stderr, "sgemm-db: nothing changed, so %s was left as it was, at schema version %d\n",
                             printable(ctx.db_path).c_str(), version);
            return tried;
        }
    }
    TuningStore store = ctx.open(OpenMode::ReadWrite);
    const auto summary = change(store, false);
    // Opening it made or upgraded the file, even where the change then found nothing to do
    // (another process made it first).
    ctx.wrote = store.opened_version() < latest_schema_version() || !summary.changed_nothing();
    report(summary);
    return summary;
}

// Whether an import or merge takes nothing the file is to get: it changes nothing in an older
// database; and where there is none, it brings no row and refuses winners (a file of no rows,
// an empty database's export or the database itself, makes an empty database, as a copy).
bool takes_nothing(const MergeSummary& summary, int version) {
    return summary.changed_nothing() && (version > 0 || summary.all_refused());
}

int cmd_import(Context& ctx) {
    // - reads standard input: sgemm-db --db other.db export | sgemm-db import -
    ctx.check_folder_for_a_new_database();
    const std::string path = ctx.args.at(0) == "-" ? "standard input" : ctx.args.at(0);
    std::ifstream file;
    if (ctx.args.at(0) != "-") {
        file = open_csv_file(path);
    } else {
        check_standard_input_for_csv();
        say_when_reading_a_terminal("sgemm-db", "the export");
    }
    std::istream& in = ctx.args.at(0) == "-" ? std::cin : file;
    // The whole file is checked first: a bad one neither changes the database nor creates it.
    const std::vector<ExportRow> rows = read_export(in, path);
    const MergeSummary summary = change_database(
        ctx, [&](TuningStore& store, bool) { return import_winners(store, rows, path, offered_kernel_problem(store)); },
        takes_nothing, [&](const MergeSummary& s) { print_merge(ctx, s, path, std::nullopt); });
    return merge_status(summary);
}

int cmd_merge(Context& ctx) {
    // A file named on the command line that is not there, a folder, a device or a pipe, a file
    // that is no database (a CSV export), or another program's database is the user's slip
    // (1), as import's.
    std::error_code ec;
    if (!std::filesystem::exists(ctx.args.at(0), ec) && !ec)
        throw UsageError("no tuning database at " + printable(ctx.args.at(0)) + " to merge");
    if (std::filesystem::is_directory(ctx.args.at(0), ec))
        throw UsageError(printable(ctx.args.at(0)) + ": is a folder, not a tuning database to merge");
    if (std::filesystem::exists(ctx.args.at(0), ec) && !std::filesystem::is_regular_file(ctx.args.at(0), ec))
        throw UsageError(printable(ctx.args.at(0)) + ": is not a regular file, so not a tuning database to merge");
    ctx.check_folder_for_a_new_database();
    TuningStore other = [&] {
        try {
            return TuningStore(ctx.args.at(0), OpenMode::ReadOnly, ctx.busy_timeout);
        } catch (const EmptyDatabaseError&) {  // an empty file, or an SQLite file with no tables yet
            throw UsageError(printable(ctx.args.at(0)) + ": is empty, not a tuning database to merge");
        } catch (const NotATuningDatabaseError& e) {
            throw UsageError(e.what());
        } catch (const DbError& e) {
            // A file that starts as an SQLite database does is one damaged (2), said in those
            // words (SQLite's "is not an SQLite database" read as the slip of 1); another (a CSV
            // export, say) is the user's slip (1).
            if ((e.code & 0xff) != SQLITE_NOTADB) throw;
            if (starts_as_sqlite(ctx.args.at(0)))
                throw DbError(printable(ctx.args.at(0)) + ": begins as an SQLite database but is damaged past reading" +
                                  (e.reason.empty() ? "" : " (SQLite: " + e.reason + ")"),
                              e.code);
            throw UsageError(e.what() + std::string("; a CSV export (export --format csv) is brought in with import"));
        }
    }();
    note_unread_wal(other);
    const MergeSummary summary = change_database(
        ctx, [&](TuningStore& store, bool) { return merge_store(store, other, offered_kernel_problem(store)); },
        takes_nothing, [&](const MergeSummary& s) { print_merge(ctx, s, other.path(), other.opened_version()); });
    return merge_status(summary);
}

int cmd_prune(Context& ctx) {
    const bool stale = ctx.vm.count("stale") > 0;
    if (stale && ctx.vm.count("device") > 0)
        throw UsageError("prune takes --device ID (repeated for more devices) or --stale, not both: run it once for "
                         "each");
    if (!stale && ctx.vm.count("device") == 0)
        throw UsageError("prune needs --device ID (repeated for more devices: --device A --device B) or --stale");
    ctx.check_existing();
    const auto prune = [&](TuningStore& store, bool trial) {
        PruneSummary s;
        const std::int64_t bytes_before = bytes_on_disk(store);
        if (stale) {
            s = prune_stale(store, all_family_sources_hashes());
        } else {
            std::vector<std::string> ids;
            for (const std::string& id : ctx.vm["device"].as<std::vector<std::string>>())
                ids.push_back(store.resolve_device(id));
            s = prune_devices(store, ids);
        }
        if (!trial && !s.changed_nothing()) compact_after_prune(store, bytes_before, s);
        return s;
    };
    const auto report = [&](const PruneSummary& s) {
        if (!s.compact_problem.empty())
            std::fprintf(stderr, "sgemm-db: the rows are removed, but the file did not shrink: %s\n",
                         printable(s.compact_problem).c_str());
        if (ctx.json) {
            Json out = Json::object();
            out.set("devices", s.devices).set("winners", s.winners).set("measurements", s.measurements);
            // "missed_shapes", as stats names them: its "misses" counts calls.
            out.set("missed_shapes", s.misses).set("binaries", s.binaries).set("kernels", s.kernels);
            out.set("newer_kept", s.newer_kept);  // none with --device, which removes what it names
            out.set("bytes_freed", static_cast<long long>(s.bytes_freed));
            out.set("compact_problem", s.compact_problem.empty() ? Json() : Json(s.compact_problem));
            std::printf("%s\n", out.dump().c_str());
            return;
        }
        std::printf("removed %d devices, %d winners, %d measurements, %d missed shapes, %d binaries, %d kernels\n",
                    s.devices, s.winners, s.measurements, s.misses, s.binaries, s.kernels);
        if (s.newer_kept > 0)
            std::printf("kept %d devices of newer library versions than this tool's %s, or of it with a suffix\n",
                        s.newer_kept, SGEMM_VERSION);
        if (s.bytes_freed > 0) std::printf("the database shrank by %s KiB\n", fixed(s.bytes_freed / 1024.0, 0).c_str());
    };
    change_database(ctx, prune, [](const PruneSummary& s, int) { return s.changed_nothing(); }, report);
    return 0;
}

int cmd_verify(Context& ctx) {
    TuningStore store = ctx.open(OpenMode::ReadOnly);
    const std::optional<DeviceFingerprint> gpu = current_gpu();
    TryLoad try_load;
    if (gpu) try_load = binary_load_failure;
    const VerifyReport r = verify_store(store, try_load, gpu ? gpu->sm() : 0, kernel_problem);
    const std::string loading = gpu ? std::to_string(r.binaries_loaded) + " loaded on " + gpu->gpu_name
                                    : "none loaded: no GPU is visible";
    if (ctx.json) {
        Json problems = Json::array();
        for (const std::string& p : r.problems) problems.push(p);
        Json out = Json::object();
        out.set("ok", r.ok()).set("schema_version", store.opened_version()).set("devices", r.devices);
        out.set("devices_without_row", r.devices_without_row);
        out.set("winners", r.winners).set("dangling_winners", r.dangling_winners);
        out.set("binaries_checked", r.binaries_checked);
        out.set("binaries_loaded", r.binaries_loaded).set("gpu", gpu ? Json(gpu->gpu_name) : Json());
        out.set("edited_device_rows", r.edited_device_rows).set("edited_values", r.edited_values);
        out.set("dangling_rows", r.dangling_rows).set("stopped_at_sizes", r.stopped_at_sizes);
        out.set("problems", problems);
        std::printf("%s\n", out.dump().c_str());
    } else {
        for (const std::string& p : r.problems) std::printf("problem: %s\n", printable(p).c_str());
        // A check per winner with a binary (against its device) and per cached binary: winners
        // that share a binary check it once each, so this may pass stats' count of binaries.
        const std::string rowless =
            r.devices_without_row > 0 ? " (and " + std::to_string(r.devices_without_row) + " of no device row)" : "";
        const std::string dangling =
            r.dangling_winners > 0 ? " (" + std::to_string(r.dangling_winners) + " of no device or kernel row)" : "";
        std::printf("%s: %s: schema version %d, %d devices%s, %d winners%s, %d binary checks (%s)%s\n",
                    r.ok() ? "ok" : "FAILED", printable(store.path()).c_str(), store.opened_version(), r.devices,
                    rowless.c_str(), r.winners, dangling.c_str(), r.binaries_checked, loading.c_str(),
                    r.stopped_at_sizes ? "; nothing else checked past the sizes no shape holds" : "");
        // The tuner measures a shape again and compiles a damaged cached binary again
        // (tuner/kernel_cache), so a winner's problem is repaired by tuning its shape again; an
        // edited device row is not, since every lookup computes the id its fields give, nor
        // is a value edited in by hand (the tuner keeps a cached binary's row as it finds it).
        if (r.problems.size() > static_cast<std::size_t>(r.edited_device_rows + r.edited_values + r.dangling_rows))
            std::printf("to repair a winner, tune its shape again (sgemm-tune --retune with those shapes on that "
                        "GPU): the tuner measures its times again, and compiles a damaged binary again and replaces "
                        "it; until then dispatch compiles a damaged binary at each create or leaves the winner out, "
                        "and export leaves out a winner with either problem\n");
        if (r.edited_values > 0)
            std::printf("a value that no tune writes (edited in by hand, or brought by an import of an older build) is "
                        "one import refuses: export leaves its winner out and merge refuses it; put it back as the "
                        "database writes it (sqlite3)\n");
        if (r.edited_device_rows > 0)
            std::printf("a device row edited by hand is found by no lookup, and no tune repairs it: put its fields "
                        "back as they were, or remove it with its winners (sgemm-db prune --device ID)\n");
        if (r.dangling_rows > 0)
            std::printf("a row that refers to a missing device or kernel row (deleted in a shell that does not "
                        "enforce foreign keys, as sqlite3's does not by default) is found by no lookup, and no tune "
                        "repairs it: put the "
                        "missing row back, or delete the rows that refer to it (sqlite3; sgemm-db prune --device ID "
                        "removes a missing device's); export leaves such winners out and merge refuses the file until "
                        "then\n");
    }
    return r.ok() ? 0 : 2;
}

int cmd_upgrade(Context& ctx) {
    ctx.check_existing();
    std::optional<TuningStore> opened;
    try {
        opened.emplace(ctx.open(OpenMode::ReadWrite, false));  // its report says what it did
    } catch (const DbError& e) {
        // A database this user may only read (the file or its folder): one of this build's
        // schema needs no upgrade, which is said (a deploy script's upgrade of a read-only
        // database failed, exit 2); one of an older schema fails as it did.
        if ((e.code & 0xff) != SQLITE_READONLY) throw;
        std::optional<TuningStore> read;
        try {
            read.emplace(ctx.db_path, OpenMode::ReadOnly, ctx.busy_timeout);
        } catch (const Error&) {
            // The write's failure is the answer (a file without tables yet, which upgrade would
            // make a tuning database, is "read-only", not "empty").
        }
        // Current only when read whole: a -wal file's commits, which a copy of the file alone
        // goes without, may hold another version.
        if (!read || read->unread_wal_bytes() > 0 || read->opened_version() < read->schema_version()) throw;
        opened.emplace(std::move(*read));
    }
    TuningStore& store = *opened;
    ctx.wrote = store.opened_version() < store.schema_version();
    if (ctx.json) {
        Json out = Json::object();
        out.set("path", store.path()).set("schema_version", store.schema_version()).set("was", store.opened_version());
        std::printf("%s\n", out.dump().c_str());
        return 0;
    }
    // From a schema of an earlier build, said as every writer says it: those builds no longer
    // read the file (a user about to roll back learns it here).
    if (const std::string upgraded = upgrade_notice(store.path(), store.opened_version()); ctx.wrote && !upgraded.empty())
        std::printf("%s\n", printable(upgraded).c_str());
    else if (ctx.wrote)
        std::printf("%s: schema version %d (was %d)\n", printable(store.path()).c_str(), store.schema_version(),
                    store.opened_version());
    else
        std::printf("%s: schema version %d already, this build's: nothing to upgrade\n", printable(store.path()).c_str(),
                    store.schema_version());
    return 0;
}

// The options every command takes, besides its own (Command::options).
const std::set<std::string> kEveryCommandsOptions = {"db", "json", "busy-timeout"};

struct Command {
    const char* name;
    const char* arguments;  // for the usage line
    const char* summary;
    std::size_t args;
    std::set<std::string> options;  // besides --db, --json and --busy-timeout
    std::function<int(Context&)> run;

    std::string usage() const { return std::string(name) + (*arguments ? " " : "") + arguments; }
};

const std::vector<Command>& commands() {
    static const std::vector<Command> all = {
        {"list", "[--device ID]", "the winners, one line each", 0, {"device"}, cmd_list},
        {"show", "M N K [--trans NN] [--precision fp32] [--align A] [--device ID]", "every measurement of a shape, best first, and its stored winners", 3,
         {"device", "trans", "precision", "align"}, cmd_show},
        {"explain", "M N K [--trans NN] [--precision fp32] [--align A] [--deterministic] [--device ID]",
         "what dispatch would launch on this device, and why", 3,
         {"device", "trans", "precision", "align", "deterministic"}, cmd_explain},
        {"stats", "", "counts, devices, size, binary-cache hits", 0, {}, cmd_stats},
        {"misses", "[--device ID]", "shapes dispatch met without a winner", 0, {"device"}, cmd_misses},
        {"export", "[--format csv|json] [-o FILE] [--device ID]", "the winners with their devices and binaries", 0,
         {"format", "output", "device"}, cmd_export},
        {"import", "FILE.csv", "add the winners of a CSV export (the faster winner stays); - reads standard input, and exports joined with cat (export --device, one a device) read as one. A file whose every winner is refused changes nothing: no database is made, and an older one is not upgraded (a file of no winners, an empty database's export, makes an empty database where there was none)", 1, {}, cmd_import},
        {"merge", "OTHER.db", "bring in another database's rows (the faster winner stays; each recorder's miss counts come in once, however often a file is merged); OTHER.db's data is never changed (SQLite may fold a -wal file left beside it into it, as any reader does), and one of an older schema is read from an upgraded copy", 1,
         {}, cmd_merge},
        {"prune", "--device ID [--device ID]... | --stale", "remove devices, or what no current build can use; compact the file when a quarter of it or more is then free", 0,
         {"device", "stale"}, cmd_prune},
        {"verify", "", "integrity, schema version, every winner's binary and times", 0, {}, cmd_verify},
        {"upgrade", "", "bring an older file to this build's schema (the reading commands and dispatch read one through an upgraded copy in memory, and writing commands upgrade it themselves, unless they are refused or change nothing; a write that fails on the file after the upgrade leaves it upgraded)", 0, {}, cmd_upgrade},
    };
    return all;
}

// A word like "-1" or "-0.5" among the arguments (show -1 4096 4096) is an argument, refused
// as the size it is not ("M must be at least 1"), not an unknown short option.
std::vector<po::option> negative_numbers_as_arguments(std::vector<std::string>& words) {
    const std::string& word = words.front();
    if (word.size() < 2 || word[0] != '-' || !(std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.'))
        return {};
    po::option argument;
    argument.value.push_back(word);
    argument.original_tokens.push_back(word);
    words.erase(words.begin());
    return {argument};
}

// Prints why sgemm-db stops, its control characters escaped (the text may quote an import
// file or a database), with a hint to --help for a wrong command line; returns `status`.
int report(const std::exception& e, int status, bool usage_hint = false) {
    std::fprintf(stderr, "sgemm-db: %s\n%s", printable_lines(e.what()).c_str(),
                 usage_hint ? "Try 'sgemm-db --help'.\n" : "");
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    treat_a_closed_pipe_as_a_write_error();
    std::string help =
        "sgemm-db: inspect, share and maintain the tuning database.\n\n"
        "Usage: sgemm-db [--db PATH] COMMAND [ARGS] [--json]\n\nCommands:\n";
    // A usage too long for its column gets a line of its own, so that the summary never
    // reads as more of its arguments.
    constexpr std::size_t kUsageColumn = 50;
    for (const Command& c : commands()) {
        const std::string usage = c.usage();
        if (usage.size() > kUsageColumn)
            help += "  " + usage + "\n  " + std::string(kUsageColumn + 1, ' ') + c.summary + "\n";
        else
            help += "  " + usage + std::string(kUsageColumn + 1 - usage.size(), ' ') + c.summary + "\n";
    }
    help += std::string("\nThe database: --db PATH, default ") + kDefaultDbPathRule +
            ".\n"
            "\"This device\" for explain: --device, else this machine's GPU, else the file's only device.\n"
            "explain takes sizes of 0 too: M or N of 0 launches nothing, and K of 0 scales C alone (as alpha\n"
            "of 0 does), on any device.\n"
            "Exit codes: 0 ok; 1 a user error (arguments, an -o path that cannot be written, an import file,\n"
            "a merge file that is no database, an unknown device, explain without --device where no GPU is\n"
            "visible and the file holds no device or several);\n"
            "2 an environment error (a database that cannot be opened, read, written or verified;\n"
            "output that fails as it is written, after which a command that changed the database says the change\n"
            "stays, and an import or merge that refused winners still exits 3);\n"
            "3 import or merge: some winners were refused (each is listed), the others went in (an import\n"
            "whose every winner is refused writes nothing); export: some winners, whose binary is damaged,\n"
            "whose time no import would take, or whose device row was edited by hand, were left out (each is\n"
            "listed), the others were written (an export that left out every winner writes no -o file, and an\n"
            "earlier one keeps what it held).\n\n"
            "Options";
    po::options_description opts(help);
    opts.add_options()("help,h", "show this help")
        ("db", po::value<std::string>(), "the database file")
        ("json", "print JSON instead of tables")
        ("busy-timeout", po::value<int>()->default_value(static_cast<int>(TuningStore::kDefaultBusyTimeout.count())),
         "ms to wait for another process's write lock")
        ("device", po::value<std::vector<std::string>>(), "a device id (or a unique prefix), as stats lists them")
        ("trans", po::value<std::string>()->default_value("NN"), "transposes of A and B: NN, NT, TN or TT")
        ("precision", po::value<std::string>()->default_value("fp32"), "fp32 or tf32 (sgemm-tune stores fp32 winners only: tf32 ones come only by import)")
        ("align", po::value<int>(), "alignment class of the call: 16, 8 or 4 bytes; default: that of tightly "
         "packed matrices, the one sgemm-tune stores the shape under")
        ("format", po::value<std::string>()->default_value("csv"), "export format: csv or json (the CSV's columns as keys, an empty field as null: a "
                                                                      "search not narrowed, a cuBLAS winner's binary)")
        ("output,o", po::value<std::string>(), "export to this file instead of standard output")
        ("deterministic", "explain: as a handle created with options.deterministic, which replaces a winner that adds "
                          "into C with float atomics by the fastest kernel without them measured for its shape")
        ("stale", "prune: remove devices of older library versions than this tool's (newer ones, and this one "
                  "with a suffix such as -dev, are kept) or of versions no build writes (an edit such as 0.3), and "
                  "binaries no winner uses that no tune can find again (of an NVRTC no remaining device has, or of "
                  "kernel sources neither this build's nor a remaining device's), then kernels nothing refers to");
    // The command and its arguments are positional words. Their options' names start with no
    // letter, so that no abbreviation a user types can match them ("--a" was ambiguous between
    // --align and "--args", and "--command list" ran list), as in cli_parse's stray words.
    const char* const command_word = "~command";
    const char* const argument_words = "~args";
    po::options_description hidden;
    hidden.add_options()(command_word, po::value<std::string>())(argument_words, po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(opts).add(hidden);
    po::positional_options_description positional;
    positional.add(command_word, 1).add(argument_words, -1);

    Context ctx;
    const Command* command = nullptr;
    try {
        store_command_line(po::command_line_parser(argc, argv)
                               .options(all)
                               .positional(positional)
                               .extra_style_parser(negative_numbers_as_arguments),
                           argc, argv, all, ctx.vm);
        po::notify(ctx.vm);
        if (ctx.vm.count("help")) {
            // After a known command, that command's help: its usage and the options it takes.
            const Command* asked = nullptr;
            for (const Command& c : commands())
                if (ctx.vm.count(command_word) && ctx.vm[command_word].as<std::string>() == c.name) asked = &c;
            if (!asked) {
                std::cout << opts << "\n";
            } else {
                po::options_description its_options("Options");
                for (const auto& o : opts.options())
                    if (asked->options.count(o->long_name()) || kEveryCommandsOptions.count(o->long_name()) ||
                        o->long_name() == "help")
                        its_options.add(o);
                std::cout << "sgemm-db " << asked->name << ": " << asked->summary << "\n\nUsage: sgemm-db [--db PATH] "
                          << asked->usage() << " [--json]\n\n"
                          << its_options << "\nsgemm-db --help lists every command, the database's default path "
                          << "and the exit codes.\n";
            }
            return finish_standard_output("sgemm-db", "the help");
        }
        if (!ctx.vm.count(command_word)) throw UsageError("no command given");
        const std::string name = ctx.vm[command_word].as<std::string>();
        for (const Command& c : commands())
            if (name == c.name) command = &c;
        if (!command) throw UsageError("unknown command " + single_quoted(name));
        if (ctx.vm.count(argument_words)) ctx.args = ctx.vm[argument_words].as<std::vector<std::string>>();
        if (ctx.args.size() != command->args)
            throw UsageError("usage: sgemm-db " + command->usage());
        for (const auto& [option, value] : ctx.vm) {
            if (!value.defaulted() && !kEveryCommandsOptions.count(option) && option != command_word && option != argument_words &&
                !command->options.count(option))
                throw UsageError("--" + option + " does not apply to " + name);
        }
        ctx.json = ctx.vm.count("json") > 0;
        const int timeout = ctx.vm["busy-timeout"].as<int>();
        if (timeout < 0) throw UsageError("--busy-timeout must not be negative");
        ctx.busy_timeout = std::chrono::milliseconds(timeout);
        ctx.db_path = database_path(ctx.vm);
    } catch (const std::exception& e) {  // the command line, one line (usage_error_text)
        std::fprintf(stderr, "sgemm-db: %s\nTry 'sgemm-db --help'.\n", usage_error_text(e).c_str());
        return 1;
    }

    try {
        const int status = command->run(ctx);
        // A script that sees 2 here must not take a change that was made for one undone.
        const int written = finish_standard_output_after_work(
            "sgemm-db", ctx.wrote ? "standard output (the " + std::string(command->name) + " itself is done: what it wrote to " +
                                        ctx.db_path + " stays)"
                                  : std::string("standard output"));
        // Export's 3 qualifies an output that did not arrive; an import's or merge's says what
        // the database now holds.
        if (written != 0 && std::string(command->name) == "export") return written;
        return status != 0 ? status : written;
    } catch (const UsageError& e) {
        return report(e, 1, true);
    } catch (const DbLockTimeoutError& e) {
        return report(DbError(std::string(e.what()) + ", or allow a longer --busy-timeout", e.code), 2);
    } catch (const DbError& e) {
        return report(e, 2);
    } catch (const NoDeviceError& e) {
        return report(e, 2);
    } catch (const Error& e) {  // a value the user gave: an import file, a device id, a format
        return report(e, 1);
    } catch (const std::exception& e) {
        return report(e, 2);
    }
}
