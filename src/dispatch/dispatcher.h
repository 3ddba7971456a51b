// One sgemm_dispatch handle: what create builds and every call reads.
//
//   create   options -> database (read-only) -> device -> catalog of this device's winners
//            -> kernels loaded (NVRTC only for missing binaries) -> per-stream workspaces
//            and cuBLAS handles -> a plan for every exact winner -> the miss log
//   gemm     check the arguments -> shape key -> plan (lock-free hash lookup; the first
//            call of a new key decides and prepares it under a mutex) -> count a miss ->
//            launch the kernel or call cuBLAS on the caller's stream; a call that computes
//            no product (K or alpha 0) scales C alone (ScaleC) and has no plan
#pragma once
#include <sgemm/dispatch.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "db/store.h"
#include "src/cuda/device.h"
#include "src/dispatch/catalog.h"
#include "src/dispatch/gemm_call.h"
#include "src/dispatch/kernel_set.h"
#include "src/dispatch/miss_log.h"
#include "src/dispatch/plan_table.h"
#include "src/dispatch/scale_c.h"
#include "src/dispatch/stream_slots.h"

namespace sgemm {

class Dispatcher {
public:
    // Throws StatusError with the status create returns.
    explicit Dispatcher(const sgemm_dispatch_options_t& options);
    ~Dispatcher();  // finish(), unless it ran already

    // Waits for the whole device, then stops the miss log and writes the misses left (also
    // when the wait failed). CUDA_ERROR if the wait failed (last_error() names a failed write
    // too), else DATABASE_ERROR if the write did. Never throws.
    sgemm_dispatch_status_t finish() noexcept;

    // The hot path: no allocation, no synchronisation, no compilation once the call's
    // shape key has a plan. Never throws.
    sgemm_dispatch_status_t gemm(const GemmCall& call, cudaStream_t stream) noexcept;

    // dispatch.h: sgemm_dispatch_prepare: gemm's checks and plan, without a launch; pointers
    // may be NULL (only their alignment counts). Never throws.
    sgemm_dispatch_status_t prepare(const GemmCall& call) noexcept;

    // dispatch.h: sgemm_dispatch_release_stream. Never throws.
    sgemm_dispatch_status_t release_stream(cudaStream_t stream) noexcept;

    // The decision for a call, as text (dispatch.h: sgemm_dispatch_explain), and as fields
    // (sgemm_dispatch_query: the status gemm would return for the arguments).
    std::string explain(const GemmCall& call) const;
    sgemm_dispatch_status_t query(const GemmCall& call, sgemm_dispatch_choice_t& choice) const;
    sgemm_dispatch_info_t info() const;

    // Sets `p` to the plan for `key`, prepared now if it has none (benchmarks launch its
    // kernel bare). Never throws: when preparing fails, `p` is nullptr and the status and
    // last_error() say why.
    sgemm_dispatch_status_t plan(const ShapeKey& key, const Plan*& p) noexcept;

    const DeviceInfo& device() const { return device_; }

private:
    // WRONG_DEVICE (with last_error) unless the calling thread's current device is the
    // handle's; CUDA_ERROR if it cannot be read. Never throws.
    sgemm_dispatch_status_t check_current_device() noexcept;
    // What gemm does before it launches: the arguments' check, the calling thread's device,
    // and the key's plan, made now if the key is new. SUCCESS with `plan` null for an empty
    // product and for a call that scales C alone (scales_c_alone). Never throws.
    sgemm_dispatch_status_t planned(const GemmCall& call, ShapeKey& key, const Plan*& plan) noexcept;
    // What explain and query report: check_call's status and key, and for a product that is
    // neither empty nor C scaled alone the decision. Pointers may be NULL (only their alignment
    // counts).
    sgemm_dispatch_status_t decide_call(const GemmCall& call, ShapeKey& key, std::optional<Decision>& decision) const;
    // gemm's C = beta * C alone (ScaleC), and what prepare readies for it: the kernel, compiled
    // and loaded at its first use. Never throw.
    sgemm_dispatch_status_t scale_c(const GemmCall& call, cudaStream_t stream) noexcept;
    sgemm_dispatch_status_t load_scale_c() noexcept;
    std::unique_ptr<Plan> make_plan(const ShapeKey& key, const Decision& decision) const;
    // NO_KERNEL for a key whose plan refuses it, with last_error saying why by the fallback
    // policy. Formats without allocating (it runs in noexcept calls).
    sgemm_dispatch_status_t refuse(const ShapeKey& key) const noexcept;

    sgemm_dispatch_options_t options_;
    std::string db_path_;
    std::string db_problem_;  // why the database is not used (without_database), else ""
    DeviceInfo device_;
    GemmPrecision precision_;
    Catalog catalog_;
    std::optional<KernelSet> kernels_;
    std::optional<StreamSlots> slots_;
    PlanTable plans_;
    ScaleC scale_c_;
    std::mutex resolve_mutex_;
    std::optional<MissLog> misses_;
    // finish() ran: the destructor's would only repeat a failed wait's message over the one
    // destroy reported, which may also name a failed write of the misses.
    bool finished_ = false;
    sgemm_dispatch_info_t timings_{};  // create's phases
};

}  // namespace sgemm
