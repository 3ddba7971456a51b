#include "src/dispatch/dispatcher.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <new>

#include "db/default_path.h"
#include "src/dispatch/status_error.h"
#include "src/dispatch/last_error.h"
#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "src/records/kernel_records.h"
#include "src/util/text.h"

namespace sgemm {
namespace {

constexpr int kDefaultMaxStreams = 8;
constexpr int kDefaultMissFlushMs = 10000;
// Only cudaStreamPerThread's id is read from the runtime (after a device fault it is not given).
constexpr const char* kUnnamedStream = "cudaStreamGetId could not name the stream (cudaStreamPerThread): %s";

using Clock = std::chrono::steady_clock;

// `call` with each NULL pointer made an aligned one: explain, query and prepare read the
// pointers only for their alignment, and NULL stands for an aligned one.
GemmCall with_aligned_pointers(GemmCall call) {
    float* const aligned = reinterpret_cast<float*>(256);
    if (!call.A) call.A = aligned;
    if (!call.B) call.B = aligned;
    if (!call.C) call.C = aligned;
    return call;
}

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void check_options(const sgemm_dispatch_options_t& o) {
    const auto bad = [](const std::string& what) { throw StatusError(SGEMM_DISPATCH_INVALID_VALUE, what); };
    if (o.device < 0) bad("options.device=" + std::to_string(o.device) + ": an ordinal is at least 0");
    if (o.fallback != SGEMM_DISPATCH_FALLBACK_CUBLAS && o.fallback != SGEMM_DISPATCH_FALLBACK_BUILTIN &&
        o.fallback != SGEMM_DISPATCH_FALLBACK_ERROR)
        bad("options.fallback=" + std::to_string(o.fallback) + " is not a sgemm_dispatch_fallback_t");
    if (o.precision != SGEMM_DISPATCH_FP32 && o.precision != SGEMM_DISPATCH_TF32)
        bad("options.precision=" + std::to_string(o.precision) + " is not a sgemm_dispatch_precision_t");
    if (o.max_streams < 0 || o.max_streams > 1024)
        bad("options.max_streams=" + std::to_string(o.max_streams) + ": 0 (the default, 8) to 1024");
    if (o.miss_flush_ms < 0) bad("options.miss_flush_ms=" + std::to_string(o.miss_flush_ms) + " is negative");
    if (o.db_path && !*o.db_path) bad("options.db_path is \"\": give a path, or NULL for the default one");
}

// Lets this thread make a capture-unsafe call (cudaFuncSetAttribute, which raises a kernel's
// shared-memory limit) for a moment, even while it captures a stream in global or
// thread-local mode.
class RelaxedCapture {
public:
    RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&mode_); }
    ~RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&mode_); }
    RelaxedCapture(const RelaxedCapture&) = delete;
    RelaxedCapture& operator=(const RelaxedCapture&) = delete;

private:
    cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

const char* decision_name(SelectionKind kind) {
    static const char* names[] = {"exact", "nearest", "fallback"};
    return names[static_cast<int>(kind)];
}

}  // namespace

Dispatcher::Dispatcher(const sgemm_dispatch_options_t& options) : options_(options) {
    const Clock::time_point start = Clock::now();
    check_options(options_);
    if (options_.max_streams == 0) options_.max_streams = kDefaultMaxStreams;
    if (options_.miss_flush_ms == 0) options_.miss_flush_ms = kDefaultMissFlushMs;
    precision_ = options_.precision == SGEMM_DISPATCH_TF32 ? GemmPrecision::tf32 : GemmPrecision::fp32;

    // The database before the device, so that its problems are reported without a GPU too.
    Clock::time_point t = Clock::now();
    std::optional<TuningStore> store;
    bool locked = false;  // past the busy timeout, at the open
    try {
        db_path_ = options_.db_path ? options_.db_path : default_db_path();
        store.emplace(db_path_, OpenMode::ReadOnly);
    } catch (const Error& e) {
        if (!options_.without_database)
            throw StatusError(SGEMM_DISPATCH_DATABASE_ERROR,
                              std::string(e.what()) + " (options.without_database runs on the fallback alone)");
        db_problem_ = e.what();
        locked = dynamic_cast<const DbBusyError*>(&e) != nullptr;
    }
    if (options_.record_misses && db_path_.empty())
        throw StatusError(SGEMM_DISPATCH_INVALID_VALUE, "record_misses needs a database path: " + db_problem_);
    // Said now, not by a failed write every miss_flush_ms and at destroy (a service account
    // that may read a shared database but not write it). A missing file is created by the
    // first write, and a database locked now may be free by then. One locked at the open is
    // not waited for a second time (create would take twice the busy timeout the header gives),
    // but its folder's and files' permissions are checked all the same.
    if (options_.record_misses) try {
            check_writable_database(db_path_, locked ? std::chrono::milliseconds(0) : TuningStore::kDefaultBusyTimeout);
        } catch (const DbBusyError&) {
        } catch (const Error& e) {
            throw StatusError(SGEMM_DISPATCH_DATABASE_ERROR,
                              std::string("record_misses writes to the database, and ") + e.what() +
                                  " (leave record_misses off, or give a database this process may write)");
        }
    timings_.database_ms = ms_since(t);

    t = Clock::now();
    device_ = run_step(SGEMM_DISPATCH_NO_DEVICE, "device", [&] { return use_device(options_.device); });
    timings_.device_ms = ms_since(t);

    t = Clock::now();
    catalog_.device = fingerprint_of(device_);
    if (store) try {
            catalog_ = load_catalog(*store, catalog_.device, precision_, options_.deterministic != 0);
        } catch (const std::bad_alloc&) {
            throw;  // the host's refusal, not the file's: no reason to run on the fallback alone
        } catch (const std::exception& e) {
            // A file that opens but whose rows cannot be read is a database that cannot be
            // read too: without_database runs on the fallback alone, reading nothing more.
            const std::string why = std::string("reading the winners: ") + e.what();
            if (!options_.without_database)
                throw StatusError(SGEMM_DISPATCH_DATABASE_ERROR, why + " (options.without_database runs on the fallback alone)");
            db_problem_ = why;
            store.reset();
        }
    timings_.database_ms += ms_since(t);

    t = Clock::now();
    const bool builtin = options_.fallback == SGEMM_DISPATCH_FALLBACK_BUILTIN;
    const int builtin_sm = find_family("warptile").min_sm;
    if (builtin && device_.sm() < builtin_sm)
        throw StatusError(SGEMM_DISPATCH_INVALID_VALUE, "the built-in kernel (warptile) needs sm_" +
                                                            std::to_string(builtin_sm) + "; this GPU is sm_" +
                                                            std::to_string(device_.sm()));
    kernels_.emplace(run_step(SGEMM_DISPATCH_CUDA_ERROR, "loading kernels",
                          [&] { return KernelSet(catalog_, builtin, store ? &*store : nullptr); }));
    timings_.kernels_ms = ms_since(t);
    timings_.compile_ms = kernels_->compile_ms();

    t = Clock::now();
    const bool cublas = options_.fallback == SGEMM_DISPATCH_FALLBACK_CUBLAS ||
                        std::any_of(catalog_.winners.begin(), catalog_.winners.end(),
                                    [](const Winner& w) { return w.kernel.is_cublas(); });
    run_step(SGEMM_DISPATCH_CUDA_ERROR, "per-stream workspaces and cuBLAS handles", [&] {
        slots_.emplace(options_.max_streams, workspace_bytes_needed(catalog_), cublas,
                       precision_ == GemmPrecision::tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    });
    timings_.memory_ms = ms_since(t);

    t = Clock::now();
    for (const Winner& w : catalog_.winners) {
        const Plan* planned = nullptr;
        if (const sgemm_dispatch_status_t status = plan(w.shape, planned); status != SGEMM_DISPATCH_SUCCESS)
            throw StatusError(status, last_error());
    }
    timings_.kernels_ms += ms_since(t);

    if (options_.record_misses)
        misses_.emplace(plans_, db_path_, catalog_.device, std::chrono::milliseconds(options_.miss_flush_ms),
                        options_.without_database ? MissingDatabase::create : MissingDatabase::refuse);
    timings_.create_ms = ms_since(start);
}

sgemm_dispatch_status_t Dispatcher::finish() noexcept {
    if (finished_) return SGEMM_DISPATCH_SUCCESS;
    finished_ = true;
    // The workspaces and kernels must outlive every launch that uses them.
    cudaSetDevice(device_.ordinal);
    const cudaError_t waited = cudaDeviceSynchronize();
    // The misses are written even when the wait failed (they are counts on the host), and a
    // failure of either is reported: the wait's first, as the graver.
    const std::string misses_error = misses_ ? misses_->stop() : std::string();
    if (waited != cudaSuccess)
        return fail(SGEMM_DISPATCH_CUDA_ERROR, "waiting for the device: %s%s%s", cudaGetErrorString(waited),
                    misses_error.empty() ? "" : "; and ", misses_error.c_str());
    if (!misses_error.empty()) return fail(SGEMM_DISPATCH_DATABASE_ERROR, "%s", misses_error.c_str());
    return SGEMM_DISPATCH_SUCCESS;
}

Dispatcher::~Dispatcher() { finish(); }

sgemm_dispatch_status_t Dispatcher::check_current_device() noexcept {
    int current = -1;
    // A failing cudaGetDevice is a sticky error from earlier work (a kernel fault), not a device mix-up.
    if (const cudaError_t e = cudaGetDevice(&current); e != cudaSuccess)
        return fail(SGEMM_DISPATCH_CUDA_ERROR, "cudaGetDevice: %s", cudaGetErrorString(e));
    if (current != device_.ordinal)
        return fail(SGEMM_DISPATCH_WRONG_DEVICE,
                    "the calling thread's current device is %d, the handle's is %d: cudaSetDevice(%d) first", current,
                    device_.ordinal, device_.ordinal);
    return SGEMM_DISPATCH_SUCCESS;
}

sgemm_dispatch_status_t Dispatcher::planned(const GemmCall& call, ShapeKey& key, const Plan*& p) noexcept {
    p = nullptr;
    if (const sgemm_dispatch_status_t status = check_call(call, precision_, key); status != SGEMM_DISPATCH_SUCCESS)
        return status;
    if (empty_product(key)) return SGEMM_DISPATCH_SUCCESS;
    if (const sgemm_dispatch_status_t status = check_current_device(); status != SGEMM_DISPATCH_SUCCESS) return status;
    if (scales_c_alone(call)) return SGEMM_DISPATCH_SUCCESS;
    return plan(key, p);
}

sgemm_dispatch_status_t Dispatcher::gemm(const GemmCall& call, cudaStream_t stream) noexcept {
    ShapeKey key;
    const Plan* p = nullptr;
    if (const sgemm_dispatch_status_t status = planned(call, key, p); status != SGEMM_DISPATCH_SUCCESS) return status;
    // No miss is counted without a plan: there is no product to tune.
    if (!p) return empty_product(key) ? SGEMM_DISPATCH_SUCCESS : scale_c(call, stream);
    // A miss counts once it is served, or refused for want of a kernel (what a tune gives): a
    // call refused for a stream's workspace or failed by the GPU, which an engine may retry,
    // does not.
    const auto count_miss = [&] {
        if (misses_ && !p->exact) p->unwritten_misses.fetch_add(1, std::memory_order_relaxed);
    };

    SgemmArgs args = call.args();
    StreamSlot* slot = nullptr;
    if (p->route == Route::Cublas || p->launch.workspace_bytes > 0) {
        const SlotClaim claim = slots_->slot_for(stream);
        if (claim.id_error != cudaSuccess)
            return fail(SGEMM_DISPATCH_CUDA_ERROR, kUnnamedStream, cudaGetErrorString(claim.id_error));
        if (claim.other_context) {
            // A default stream is no stream the user made: it is the current context's.
            const bool default_stream = stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
            return fail(SGEMM_DISPATCH_WRONG_DEVICE,
                        default_stream
                            ? "the default stream is the calling thread's current CUDA context's, which is not the "
                              "handle's (device %d's primary context), whose per-stream workspaces this call needs: "
                              "make the primary context current (cudaSetDevice(%d)) or give a stream made on it"
                            : "the stream belongs to another device or CUDA context than the handle's (device %d's "
                              "primary context), whose per-stream workspaces this call needs: give a stream that the "
                              "runtime API made on device %d while no other context was current",
                        device_.ordinal, device_.ordinal);
        }
        slot = claim.slot;
        if (!slot)
            return fail(SGEMM_DISPATCH_TOO_MANY_STREAMS,
                        "all %d per-stream workspaces belong to other streams (options.max_streams; "
                        "info.streams_used counts them): a stream keeps its workspace until "
                        "sgemm_dispatch_release_stream, also once destroyed, or once the thread whose "
                        "cudaStreamPerThread it was has ended",
                        slots_->count());
        args.workspace = slot->splitk_workspace();
    }
    switch (p->route) {
        case Route::Kernel:
        case Route::Builtin:
            // A call with a workspace takes its turn on the stream's slot (StreamSlot::launch).
            if (const cudaError_t e = slot ? slot->launch(p->launch, args, stream) : p->launch.launch(args, stream);
                e != cudaSuccess)
                return fail(SGEMM_DISPATCH_CUDA_ERROR, "cudaLaunchKernel: %s", cudaGetErrorString(e));
            count_miss();
            return SGEMM_DISPATCH_SUCCESS;
        case Route::Cublas:
            if (const cublasStatus_t s = slot->cublas_sgemm(stream, args, key.trans_a, key.trans_b);
                s != CUBLAS_STATUS_SUCCESS)
                return fail(SGEMM_DISPATCH_CUBLAS_ERROR, "cublasSgemm: %s", cublasGetStatusString(s));
            count_miss();
            return SGEMM_DISPATCH_SUCCESS;
        case Route::Refuse:
            break;
    }
    count_miss();
    return refuse(key);
}

sgemm_dispatch_status_t Dispatcher::scale_c(const GemmCall& call, cudaStream_t stream) noexcept {
    if (ScaleC::needs_kernel(call.beta))
        if (const sgemm_dispatch_status_t status = load_scale_c(); status != SGEMM_DISPATCH_SUCCESS) return status;
    if (const cudaError_t e = scale_c_.launch(call.M, call.N, call.beta, call.C, call.ldc, stream); e != cudaSuccess)
        return fail(SGEMM_DISPATCH_CUDA_ERROR, "scaling C by beta alone (K or alpha is 0): %s", cudaGetErrorString(e));
    return SGEMM_DISPATCH_SUCCESS;
}

sgemm_dispatch_status_t Dispatcher::load_scale_c() noexcept {
    if (scale_c_.loaded()) return SGEMM_DISPATCH_SUCCESS;
    try {
        // NVRTC and the load are host work, legal in a capture only in relaxed mode.
        RelaxedCapture relaxed;
        scale_c_.load(Arch{device_.sm()});
        return SGEMM_DISPATCH_SUCCESS;
    } catch (const CudaError& e) {
        return fail(SGEMM_DISPATCH_CUDA_ERROR, "loading the kernel that scales C alone (K or alpha is 0): %s", e.what());
    } catch (const std::exception& e) {  // NVRTC's: a refusal, kept, or its own failure, tried again
        return fail(status_of(e, SGEMM_DISPATCH_COMPILE_ERROR),
                    "compiling the kernel that scales C alone (K or alpha is 0): %s", e.what());
    }
}

sgemm_dispatch_status_t Dispatcher::refuse(const ShapeKey& key) const noexcept {
    const char* const why = options_.fallback == SGEMM_DISPATCH_FALLBACK_ERROR
                                ? "the fallback policy is ERROR"
                                : "the built-in kernel of the fallback policy cannot run it (sgemm_dispatch_explain "
                                  "says why)";
    return fail(SGEMM_DISPATCH_NO_KERNEL, "no winner for M=%d N=%d K=%d %c%c %s align%d, and %s", key.M, key.N, key.K,
                key.trans_a ? 'T' : 'N', key.trans_b ? 'T' : 'N',
                key.precision == GemmPrecision::tf32 ? "tf32" : "fp32", key.alignment, why);
}

sgemm_dispatch_status_t Dispatcher::prepare(const GemmCall& call) noexcept {
    ShapeKey key;
    const Plan* p = nullptr;
    if (const sgemm_dispatch_status_t status = planned(with_aligned_pointers(call), key, p);
        status != SGEMM_DISPATCH_SUCCESS)
        return status;
    // prepare takes no beta: a call of K = 0 may need the kernel that scales C.
    if (!p) return empty_product(key) ? SGEMM_DISPATCH_SUCCESS : load_scale_c();
    if (p->route == Route::Refuse) return refuse(key);
    return SGEMM_DISPATCH_SUCCESS;
}

sgemm_dispatch_status_t Dispatcher::release_stream(cudaStream_t stream) noexcept {
    // cudaStreamPerThread names the calling thread's stream of the current device: on another
    // device it would name a stream that holds nothing here, and the release would do nothing.
    if (const sgemm_dispatch_status_t status = check_current_device(); status != SGEMM_DISPATCH_SUCCESS) return status;
    if (const cudaError_t e = slots_->release(stream); e != cudaSuccess)
        return fail(SGEMM_DISPATCH_CUDA_ERROR, kUnnamedStream, cudaGetErrorString(e));
    return SGEMM_DISPATCH_SUCCESS;
}

sgemm_dispatch_status_t Dispatcher::plan(const ShapeKey& key, const Plan*& p) noexcept {
    if ((p = plans_.find(key))) return SGEMM_DISPATCH_SUCCESS;
    try {
        std::lock_guard<std::mutex> lock(resolve_mutex_);
        if ((p = plans_.find(key))) return SGEMM_DISPATCH_SUCCESS;  // another thread prepared it meanwhile
        RelaxedCapture relaxed;
        const Decision decision = decide(catalog_, key, options_.fallback, Arch{device_.sm()}, slots_->splitk_bytes());
        p = plans_.insert(make_plan(key, decision));
        return SGEMM_DISPATCH_SUCCESS;
    } catch (const std::exception& e) {
        // The key is written by fail's own formatting: a string made for it could throw again
        // when the host has no memory left.
        return fail(status_of(e, SGEMM_DISPATCH_CUDA_ERROR), "preparing the launch for M=%d N=%d K=%d %c%c %s align%d: %s",
                    key.M, key.N, key.K, key.trans_a ? 'T' : 'N', key.trans_b ? 'T' : 'N',
                    key.precision == GemmPrecision::tf32 ? "tf32" : "fp32", key.alignment, e.what());
    }
}

std::unique_ptr<Plan> Dispatcher::make_plan(const ShapeKey& key, const Decision& decision) const {
    auto plan = std::make_unique<Plan>();
    plan->key = key;
    plan->route = decision.route;
    plan->exact = decision.selection.kind == SelectionKind::Exact;
    if (decision.route == Route::Kernel || decision.route == Route::Builtin) {
        // Every winner's kernel and the built-in ones were loaded at create.
        plan->launch = kernels_->find(decision.kernel)->prepare(key.M, key.N, key.K, key.alignment, decision.kernel.params);
    }
    return plan;
}

sgemm_dispatch_status_t Dispatcher::decide_call(const GemmCall& call, ShapeKey& key,
                                                std::optional<Decision>& decision) const {
    decision.reset();
    const sgemm_dispatch_status_t status = check_call(with_aligned_pointers(call), precision_, key);
    if (status == SGEMM_DISPATCH_SUCCESS && !empty_product(key) && !scales_c_alone(call))
        decision = decide(catalog_, key, options_.fallback, Arch{device_.sm()}, slots_->splitk_bytes());
    return status;
}

sgemm_dispatch_status_t Dispatcher::query(const GemmCall& call, sgemm_dispatch_choice_t& choice) const {
    ShapeKey key;
    std::optional<Decision> decision;
    if (const sgemm_dispatch_status_t status = decide_call(call, key, decision); status != SGEMM_DISPATCH_SUCCESS)
        return status;
    choice = sgemm_dispatch_choice_t{};
    if (!decision) {
        const bool empty = empty_product(key);
        choice.decision = empty ? SGEMM_DISPATCH_DECISION_EMPTY : SGEMM_DISPATCH_DECISION_SCALE_C;
        choice.route = empty ? SGEMM_DISPATCH_ROUTE_NONE : SGEMM_DISPATCH_ROUTE_SCALE_C;
        return SGEMM_DISPATCH_SUCCESS;
    }
    static const sgemm_dispatch_decision_t decisions[] = {
        SGEMM_DISPATCH_DECISION_EXACT, SGEMM_DISPATCH_DECISION_NEAREST, SGEMM_DISPATCH_DECISION_FALLBACK};
    choice.decision = decisions[static_cast<int>(decision->selection.kind)];
    switch (decision->route) {
        case Route::Kernel: choice.route = SGEMM_DISPATCH_ROUTE_KERNEL; break;
        case Route::Builtin: choice.route = SGEMM_DISPATCH_ROUTE_BUILTIN; break;
        case Route::Cublas: choice.route = SGEMM_DISPATCH_ROUTE_CUBLAS; break;
        case Route::Refuse: choice.route = SGEMM_DISPATCH_ROUTE_NONE; break;
    }
    if (decision->route == Route::Kernel || decision->route == Route::Builtin)
        std::snprintf(choice.kernel, sizeof choice.kernel, "%s", decision->kernel.description.c_str());
    return SGEMM_DISPATCH_SUCCESS;
}

std::string Dispatcher::explain(const GemmCall& call) const {
    ShapeKey key;
    std::optional<Decision> decision;
    if (const sgemm_dispatch_status_t status = decide_call(call, key, decision); status != SGEMM_DISPATCH_SUCCESS)
        return std::string("gemm would return ") + sgemm_dispatch_status_string(status) + "\nwhy       " +
               printable(last_error()) + "\n";
    if (!decision) return "shape     " + explained_shape(key) + "\nlaunch    " + launch_without_product(key) + "\n";

    const Decision& d = *decision;
    std::string launch;
    if (d.route == Route::Cublas)
        launch = "cuBLAS (cublasSgemm with this stream's handle)";
    else if (d.route == Route::Refuse)
        launch = "nothing: gemm returns SGEMM_DISPATCH_NO_KERNEL";
    else {
        const Family& f = *family_of(d.kernel);
        const LaunchGeometry g = f.geometry(d.kernel.params, key.M, key.N, key.K);
        const int sms = catalog_.device.sm_count;
        const StreamKSplit split = f.stream_k_split(d.kernel.params, key.M, key.N, key.K, sms);
        char geometry[300];
        std::snprintf(geometry, sizeof geometry,
                      ": grid %u x %u x %u, %u threads, %u bytes of shared memory, %zu bytes of workspace",
                      split.main_blocks, g.grid.y, g.grid.z, g.block.x, g.dynamic_shared_bytes,
                      f.workspace_bytes(d.kernel.params, key.M, key.N, key.K, sms, key.alignment));
        launch = d.kernel.description + geometry;
        if (f.stages_operands(d.kernel.params)) launch = staged_launch(f, d.kernel.params, key, sms, launch);
        if (split.tail_blocks > 0)
            launch += ", then a stream-K tail of " + std::to_string(split.tail_blocks) + " blocks for the last " +
                      std::to_string(g.grid.x - split.main_blocks) + " tiles";
        if (f.has_sum_pass(d.kernel.params))
            launch += ", then a pass of " +
                      std::to_string(f.second_geometry(d.kernel.params, key.M, key.N, key.K, sms, key.alignment).grid.x) +
                      " blocks that sums the " + std::to_string(g.grid.y) + " slices";
    }
    std::string database = printable(db_path_) + ": " + std::to_string(catalog_.winners.size()) + " winners of this device";
    if (!db_problem_.empty()) database = "not used (" + printable(db_problem_) + "): every shape falls back";
    // Each line's text escaped (printable): descriptions, times and GPU names come from the
    // database file, and a newline in one must not make a line of its own in the explanation.
    for (const SkippedWinner& s : catalog_.skipped) database += "\n          skipped " + printable(s.describe());
    for (const DeterministicStandIn& s : catalog_.stand_ins) database += "\n          " + printable(s.describe());
    for (const std::string& s : kernels_->compiled_notes()) database += "\n          compiled at create: " + printable(s);
    if (misses_ && !misses_->last_error().empty()) database += "\n          " + printable(misses_->last_error());
    return "shape     " + key.to_string() + "\ndecision  " + decision_name(d.selection.kind) + "\nlaunch    " +
           printable(launch) + "\nwhy       " + printable(d.reason) + "\ndevice    " + printable(catalog_.device.id()) +
           "  " + printable(catalog_.device.describe()) + "\ndatabase  " + database + "\n";
}

sgemm_dispatch_info_t Dispatcher::info() const {
    sgemm_dispatch_info_t info = timings_;
    info.winners = static_cast<int>(catalog_.winners.size());
    info.winners_skipped = static_cast<int>(catalog_.skipped.size());
    info.winners_replaced = static_cast<int>(catalog_.stand_ins.size());
    // The kernel that scales C, once a call or prepare loaded it, is always NVRTC's.
    info.kernels_loaded = kernels_->loaded() + (scale_c_.loaded() ? 1 : 0);
    info.kernels_compiled = kernels_->compiled() + (scale_c_.loaded() ? 1 : 0);
    info.shapes_prepared = plans_.size();
    info.streams_used = slots_->used();
    info.max_streams = slots_->count();
    info.workspace_bytes = slots_->splitk_bytes();
    info.misses_pending = misses_ ? misses_->pending() : 0;
    info.misses_written = misses_ ? misses_->written() : 0;
    return info;
}

}  // namespace sgemm
