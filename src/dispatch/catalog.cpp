#include "src/dispatch/catalog.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "db/verify.h"
#include "src/families/registry.h"
#include "src/records/kernel_records.h"
#include "templates/sgemm_common.cuh"

namespace sgemm {
// Not the turns on C (SGEMM_SUM_IN_ORDER): they queue where a tile's slices run side by
// side, the one-wave grids where atomic winners mostly win (32x4096x4096 in 16 slices: 0.079
// ms against 0.0355 for the pass on the H200); a measured turns kernel can still stand in.
std::optional<KernelRef> deterministic_twin(const KernelRef& kernel, Arch arch) {
    const Family* f = family_of(kernel);
    if (!f) return std::nullopt;
    for (std::size_t i = 0; i < f->params.size(); ++i) {
        if (!f->params[i].sum_pass) continue;
        for (int how : {SGEMM_SUM_BY_PASS, SGEMM_SUM_BY_LAST_BLOCK}) {
            ParamValues v = kernel.params;
            v[i] = how;
            if (f->invalid_reason(v, arch).empty()) return kernel_ref(*f, v);
        }
    }
    return std::nullopt;
}

namespace {

std::string ms_text(double ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4f ms", ms);
    return text;
}

// What a deterministic catalog runs in place of `atomic` (load_catalog), or nothing.
std::optional<DeterministicStandIn> deterministic_stand_in(TuningStore& store, const Winner& atomic, Arch arch) {
    const std::vector<Measurement> measured = store.measurements(atomic.device_id, atomic.shape);
    for (const Measurement& m : measured) {
        if (!m.valid) break;  // the valid ones come first, fastest first
        Winner w = atomic;
        w.kernel = m.kernel;
        if (!m.median_ms || m.kernel.is_cublas() || kernel_sums_with_atomics(m.kernel) || !winner_unusable(w, arch).empty())
            continue;
        if (faulted_in(m.kernel, measured)) continue;  // timed, then faulted in a later run
        if (*m.median_ms >= atomic.cublas_ms)
            return DeterministicStandIn{atomic, KernelRef::cublas(), atomic.cublas_ms,
                                        "cuBLAS took " + ms_text(atomic.cublas_ms) +
                                            ", the fastest kernel without atomics measured for this shape " +
                                            ms_text(*m.median_ms)};
        return DeterministicStandIn{atomic, m.kernel, *m.median_ms,
                                    "the fastest kernel without atomics measured for this shape (" +
                                        ms_text(*m.median_ms) + " in its tune's search)"};
    }
    if (const std::optional<KernelRef> twin = deterministic_twin(atomic.kernel, arch);
        twin && kernel_cannot_run(*twin, atomic.shape, arch).empty())
        return DeterministicStandIn{atomic, *twin, std::nullopt,
                                    "the same tiles and split with the slices summed in a fixed order (no measurement of "
                                    "a kernel without atomics is stored for this shape, so the time quoted is the tuned "
                                    "kernel's)"};
    return std::nullopt;
}

}  // namespace

Catalog load_catalog(TuningStore& store, const DeviceFingerprint& device, GemmPrecision precision,
                     bool deterministic) {
    Catalog catalog;
    catalog.device = device;
    const Arch arch{device.sm()};
    for (WinnerWithBinary& row : store.winners_with_binaries(device.id())) {
        Winner& w = row.winner;
        if (w.shape.precision != precision) continue;
        if (const std::string why = winner_unusable(w, arch); !why.empty()) {
            catalog.skipped.push_back({w, why});
            continue;
        }
        std::string why_compile = "missing from the binary cache";
        if (deterministic && kernel_sums_with_atomics(w.kernel)) {
            std::optional<DeterministicStandIn> stand_in = deterministic_stand_in(store, w, arch);
            if (!stand_in) {
                catalog.skipped.push_back({w, "its slices add into C with float atomics, which options.deterministic "
                                              "refuses, and no kernel without them was measured or is valid for its tiles"});
                continue;
            }
            w.kernel = stand_in->runs;
            if (stand_in->ms) {  // the figures the database derives from the time, for explain
                w.tflops *= w.ms / *stand_in->ms;
                w.ms = *stand_in->ms;
                w.speedup = w.cublas_ms / w.ms;
            }
            w.binary_key.clear();
            if (!w.kernel.is_cublas()) {
                w.binary_key = own_binary_key(w, device);
                row.binary = store.find_binary(w.binary_key);
                why_compile = "the deterministic stand-in of an atomic winner, missing from the binary cache";
            }
            catalog.stand_ins.push_back(std::move(*stand_in));
        }
        if (!w.kernel.is_cublas()) {
            if (std::string mismatch = binary_mismatch(w, device); !mismatch.empty()) {
                // Its own binary instead: from the cache, else compiled at create.
                w.binary_key = own_binary_key(w, device);
                row.binary = store.find_binary(w.binary_key);
                why_compile = std::move(mismatch);
            }
            // Why the binary cannot serve as it is, or empty when it can.
            const std::string unusable = row.binary ? binary_problem(*row.binary, device) : why_compile;
            if (unusable.empty()) {
                catalog.binaries.emplace(w.binary_key, std::move(*row.binary));
            } else if (const std::string invalid = family_of(w.kernel)->invalid_reason(w.kernel.params, arch);
                       !invalid.empty()) {
                catalog.skipped.push_back({w, unusable + ", and this build cannot compile it: " + invalid});
                continue;
            } else {
                catalog.unusable_binaries[w.binary_key] = unusable;
            }
        }
        catalog.winners.push_back(w);
    }
    return catalog;
}

std::size_t workspace_bytes_needed(const Catalog& catalog) {
    const Arch arch{catalog.device.sm()};
    const CannotRun cannot_run = [&](const Winner& w, const ShapeKey& shape) {
        return kernel_cannot_run(w.kernel, shape, arch);
    };
    std::size_t bytes = 0;
    for (const Winner& w : catalog.winners) {
        const Family* f = family_of(w.kernel);
        if (!f) continue;
        // A split-K winner's partials grow with M, and a tile as tall as twice its M has no
        // fewer slices to re-split to with as many blocks: sized for its own shape alone, a
        // batch just above a tuned one fell back to cuBLAS. So its room is for every M the
        // nearest rule can give it at its own N and K, at most twice its own. A staging winner
        // copies whole operands, the largest workspaces there are, which that would double:
        // its room is for its own shape.
        const int M = f->splits_k(w.kernel.params) ? largest_m_served(catalog.winners, w, cannot_run) : w.shape.M;
        bytes = std::max(bytes, f->workspace_bytes(w.kernel.params, M, w.shape.N, w.shape.K, catalog.device.sm_count,
                                                   w.shape.alignment));
    }
    return (bytes + 255) / 256 * 256;
}

KernelRef builtin_kernel(bool trans_a, bool trans_b) {
    const Family& family = find_family("warptile");
    ParamValues values = family.defaults;
    for (std::size_t i = 0; i < family.params.size(); ++i) {
        if (family.params[i].name == "TA") values[i] = trans_a;
        if (family.params[i].name == "TB") values[i] = trans_b;
        if (family.params[i].name == "SPLITS") values[i] = 1;  // no workspace: runs on any stream
        if (family.params[i].aligned_only) values[i] = 0;       // runs at any alignment
    }
    return kernel_ref(family, values);
}

namespace {

// Winner w's kernel as it may run `shape` within `workspace_bytes`: as it is when it fits,
// else with the most slices above 1 that fit, from its family's list of split counts, valid
// for `arch` and able to run the shape there (the binary is the same: it takes the count from
// the grid; but fewer slices give each block more of K, and decode holds its block's slice of
// A in shared memory, which may then pass the GPU's limit). The tuner
// chose the split count to fill the GPU, so a count that would launch fewer blocks than w
// does at its own shape is not taken: on the H200 the batch-32 o winner (32x4096x4096, 256
// blocks of 8 slices) re-split to 4 slices at qkv's N (192 blocks) ran 0.90x of cuBLAS.
// Empty when no count serves.
std::optional<KernelRef> fitted_to_workspace(const Winner& w, const ShapeKey& shape, Arch arch,
                                             std::size_t workspace_bytes, int sms) {
    const Family* f = family_of(w.kernel);
    auto fits = [&](const ParamValues& v) {
        return f->workspace_bytes(v, shape.M, shape.N, shape.K, sms, shape.alignment) <= workspace_bytes;
    };
    if (!f || fits(w.kernel.params)) return w.kernel;
    if (!f->splits_k(w.kernel.params)) return std::nullopt;  // a stream-K tail's or staging's: no count to lower
    const unsigned long long tuned_blocks = f->geometry(w.kernel.params, w.shape.M, w.shape.N, w.shape.K).blocks();
    for (std::size_t i = 0; i < f->params.size(); ++i) {
        if (!f->params[i].split_count) continue;
        std::vector<int> counts = f->params[i].values;
        std::sort(counts.rbegin(), counts.rend());
        for (int count : counts) {
            if (count <= 1 || count >= w.kernel.params[i]) continue;
            ParamValues v = w.kernel.params;
            v[i] = count;
            if (f->geometry(v, shape.M, shape.N, shape.K).blocks() < tuned_blocks) break;  // fewer counts, fewer blocks
            if (fits(v) && f->invalid_reason(v, arch).empty() &&
                f->unsupported_shape_reason(v, shape.M, shape.N, shape.K, arch).empty())
                return kernel_ref(*f, v);
        }
    }
    return std::nullopt;
}

}  // namespace

Decision decide(const Catalog& catalog, const ShapeKey& key, sgemm_dispatch_fallback_t fallback, Arch arch,
                std::size_t workspace_bytes) {
    const int sms = catalog.device.sm_count;
    Decision d;
    d.selection = select_kernel(catalog.winners, key, [&](const Winner& w, const ShapeKey& shape) -> std::string {
        if (std::string why = kernel_cannot_run(w.kernel, shape, arch); !why.empty()) return why;
        if (fitted_to_workspace(w, shape, arch, workspace_bytes, sms)) return "";
        const Family& f = *family_of(w.kernel);
        return "it would need " +
               std::to_string(f.workspace_bytes(w.kernel.params, shape.M, shape.N, shape.K, sms, shape.alignment)) +
               " bytes of " +
               (f.splits_k(w.kernel.params)         ? "split-K"
                : f.stages_operands(w.kernel.params) ? "staging"
                                                     : "stream-K") +
               " workspace (each stream holds " +
               std::to_string(workspace_bytes) + ")" +
               (f.splits_k(w.kernel.params)
                    ? ", and no fewer slices fit with as many blocks as its tuned launch and within the GPU's limits"
                    : "");
    });
    d.reason = d.selection.reason;
    if (const Winner* w = d.selection.winner) {
        d.route = w->kernel.is_cublas() ? Route::Cublas : Route::Kernel;
        for (const DeterministicStandIn& s : catalog.stand_ins)
            if (s.atomic.shape == w->shape) {
                // The selection named the stand-in, with the tuned kernel's time (the stand-in
                // was never timed): the winner it names is the tuned kernel, and the stand-in,
                // which runs, is said after.
                const std::size_t named = d.reason.find(s.runs.description + " (");
                if (named != std::string::npos)
                    d.reason.replace(named, s.runs.description.size(), s.atomic.kernel.description);
                d.reason += "; deterministic: " + s.runs.description + " stands in for the tuned kernel, " +
                            s.atomic.kernel.description + ", whose slices add into C with float atomics: " + s.how;
            }
        // An exact winner is not checked by select_kernel: it runs as it is (dispatch sizes the
        // workspace for it), re-split only where a smaller workspace was asked of decide.
        d.kernel = fitted_to_workspace(*w, key, arch, workspace_bytes, sms).value_or(w->kernel);
        const Family* f = family_of(d.kernel);
        const auto slices = [&] { return std::to_string(f->geometry(d.kernel.params, key.M, key.N, key.K).grid.y); };
        if (f && f->sums_with_atomics(d.kernel.params))
            d.reason += "; its " + slices() +
                        " slices add into C with float atomics, so C varies in the last bits from run to run "
                        "(options.deterministic runs a kernel without them)";
        if (f && f->sums_in_order(d.kernel.params))
            d.reason += "; its " + slices() + " slices take turns adding into C, in slice order, so C repeats bit for bit";
        if (d.kernel.params != w->kernel.params)
            d.reason += "; re-split as " + d.kernel.description + ": the stream's " + std::to_string(workspace_bytes) +
                        " bytes of split-K workspace hold no more slices of this shape";
        return d;
    }
    const bool tf32 = key.precision == GemmPrecision::tf32;
    switch (fallback) {
        case SGEMM_DISPATCH_FALLBACK_CUBLAS:
            d.route = Route::Cublas;
            d.kernel = KernelRef::cublas();
            d.reason += tf32 ? "; fallback policy: cuBLAS (TF32 tensor-op math)" : "; fallback policy: cuBLAS";
            break;
        case SGEMM_DISPATCH_FALLBACK_BUILTIN:
            d.route = Route::Builtin;
            d.kernel = builtin_kernel(key.trans_a, key.trans_b);
            d.reason += "; fallback policy: the built-in kernel, " + d.kernel.description +
                        (tf32 ? " (fp32 math, more exact than TF32)" : "");
            // A size within a tile of 2^31, say: refused, not launched to wrap.
            if (const std::string why = kernel_cannot_run(d.kernel, key, arch); !why.empty()) {
                d.route = Route::Refuse;
                d.reason += ", which cannot run it (" + why + "), so the call returns SGEMM_DISPATCH_NO_KERNEL";
            }
            break;
        case SGEMM_DISPATCH_FALLBACK_ERROR:
            d.route = Route::Refuse;
            d.reason += "; fallback policy: error, so the call returns SGEMM_DISPATCH_NO_KERNEL";
            break;
    }
    return d;
}

std::string staged_launch(const Family& family, const ParamValues& values, const ShapeKey& key, int sms,
                          const std::string& main_launch) {
    const std::string main = family.geometry(values, key.M, key.N, key.K).grid.x > 0
                                 ? main_launch
                                 : "no main kernel (C has fewer than 4 columns)";
    if (!family.stages_call(values, key.N, key.alignment))
        return main + " (no staging kernel: the call's rows take 16-byte copies where they are, and N is a "
                      "multiple of 4)";
    // Operands of class 16 take 16-byte copies where they are: the kernel copies none.
    std::string tasks;
    if (key.alignment < 16) tasks = "copies the misaligned operands its loop reads 16 bytes at a time into the workspace";
    if (const int last = key.N % 4; last > 0)
        tasks += (tasks.empty() ? "" : " and ") + std::string("computes C's last ") +
                 (last == 1 ? "column" : std::to_string(last) + " columns");
    const unsigned blocks = family.second_geometry(values, key.M, key.N, key.K, sms, key.alignment).blocks();
    return "a staging kernel of " + std::to_string(blocks) + " blocks that " + tasks + ", then " + main;
}

}  // namespace sgemm
