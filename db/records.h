// The rows of the tuning database as C++ values: what the tuner writes and dispatch reads.
// They hold plain data only (no CUDA types), so that db/ depends on SQLite alone; the tuner
// fills them from src/ (DeviceInfo, CompiledKernel, Family).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/shape_key.h"

namespace sgemm {

// What scopes every tuning result: a result is only used on a device whose fingerprint is
// identical, so a new driver, CUDA, NVRTC or library version starts a fresh device.
struct DeviceFingerprint {
    std::string gpu_name;  // "NVIDIA H200"
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    std::int64_t memory_bytes = 0;
    int driver_version = 0;     // as cudaDriverGetVersion: 13000 is 13.0
    int runtime_version = 0;    // as cudaRuntimeGetVersion
    std::string nvrtc_version;  // "13.0"
    std::string library_version = SGEMM_VERSION;

    // The device's id in the database: 16 hex digits hashing every field above.
    std::string id() const;
    int sm() const { return cc_major * 10 + cc_minor; }
    // "NVIDIA H200 sm_90, 132 SMs, 140 GiB, driver 13.0, CUDA 13.0, NVRTC 13.0, sgemm 0.1.0"
    std::string describe() const;
};

// Whether two fingerprints are of one GPU model: its name, compute capability and SM count.
// An upgrade of the driver, CUDA, NVRTC or sgemm gives the same GPU another device id, under
// which dispatch reads its winners and records its misses afresh.
bool same_gpu(const DeviceFingerprint& a, const DeviceFingerprint& b);

// Whether `other` is an earlier build of `current`'s GPU: the same GPU, no version newer
// (sgemm, driver, CUDA, NVRTC) and one at least older. A version that is no build's counts as
// older, as prune --stale takes it. What such a build recorded and tuned, `current` tunes
// again for itself; a newer build's rows are that build's to use.
bool earlier_build(const DeviceFingerprint& other, const DeviceFingerprint& current);

// The fields in which `other`, of the same GPU, differs from `current`, as describe() writes
// them: "driver 12.8, sgemm 0.3.0".
std::string build_differences(const DeviceFingerprint& other, const DeviceFingerprint& current);

// A kernel: a point of a family's parameter space, or cuBLAS itself.
struct KernelRef {
    std::string family;          // "async"; "cublas" for cuBLAS
    std::vector<int> params;     // values in the family's parameter order; empty for cuBLAS
    std::string description;     // "async BM=128 BN=128 BK=8 TM=8 TN=8" (Family::describe)
    std::string template_hash;   // family_sources_hash: its templates and host code; empty for cuBLAS

    static KernelRef cublas();
    bool is_cublas() const { return family == "cublas"; }
    bool operator==(const KernelRef& o) const {
        return family == o.family && params == o.params && template_hash == o.template_hash;
    }
};

// "128,128,8,8,8", the form params take in the database and in exports, and back.
std::string params_text(const std::vector<int>& params);
std::vector<int> parse_params(const std::string& text);  // throws Error on a bad list

// A compiled kernel in the binary cache.
struct Binary {
    std::string cache_key;  // kernel_cache_key() of src/jit/compiler.h
    KernelRef kernel;
    int arch = 0;  // 90 for sm_90
    std::string nvrtc_version;
    std::string lowered_name;
    std::vector<char> cubin;
    // cubin_checksum(cubin) as NVRTC gave it (to_binary makes it), kept with the cubin from
    // then on; "" for a binary stored before the database kept checksums (schema version 4).
    std::string cubin_checksum;
    int registers = 0, shared_bytes = 0, stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0;
    double compile_ms = 0.0;
    std::int64_t hits = 0;  // read back: lookups this binary answered
};

// A checksum of a cubin's bytes (64-bit FNV-1a, 16 hex digits): it tells a cubin damaged on
// disk or in transit from the one compiled, which an ELF that still reads whole does not.
std::string cubin_checksum(const std::vector<char>& cubin);

// One candidate timed (or rejected) for one shape on one device.
struct Measurement {
    std::string device_id;
    ShapeKey shape;
    KernelRef kernel;
    std::optional<double> median_ms, min_ms, max_ms;  // absent when rejected before timing
    int runs = 0;
    std::optional<double> error_norm;  // relative error norm against the reference
    // The check's scaled errors |out - ref| / bound (tuner/accuracy.h) in units of fp32's unit
    // roundoff: the largest and the root mean square, each the largest of the check's runs.
    // Absent where the run was not timed, for cuBLAS where it is the reference, and in
    // measurements stored before schema version 5.
    std::optional<double> max_error_u, rms_error_u;
    bool valid = true;
    std::string invalid_reason;  // required when !valid
    std::optional<int> sm_clock_mhz;
    std::string measured_at;  // ISO 8601 UTC; left empty, the store writes the current time
    std::string tuner_version = SGEMM_VERSION;
    std::optional<double> tflops;  // read back: computed by the database from shape and median
};

// How the invalid_reason of a measurement whose run faulted the device begins: the tuner
// stores one for a candidate that faulted (tuner/tuner.cpp).
constexpr const char* kFaultedReason = "faulted the GPU: ";

// The kernels that faulted the device in `measured` (an invalid_reason that begins with
// kFaultedReason), as built by this library version, each once: the same kernel built from
// other sources (templates or family code), or by another version, after a fix, has not. Nor has one measured valid
// since its last fault, by a run that tried it again (sgemm-tune --retry-faulted) and found
// it sound. A kernel that faulted is tuned no more (tuner/candidate_check.h), kept as no
// winner, and stands in for none (src/dispatch/catalog.cpp), though it was timed before.
std::vector<KernelRef> kernels_that_faulted(const std::vector<Measurement>& measured);
// Whether `kernel` is one of them.
bool faulted_in(const KernelRef& kernel, const std::vector<Measurement>& measured);

// The kernel dispatch launches for a device and shape key.
struct Winner {
    std::string device_id;
    ShapeKey shape;
    KernelRef kernel;        // KernelRef::cublas() when no candidate beat cuBLAS
    std::string binary_key;  // its Binary's cache_key; empty for cuBLAS
    double ms = 0.0;
    double cublas_ms = 0.0;  // cuBLAS timed in the same run
    double tolerance = 0.0;  // the validation tolerance it passed
    std::string provenance;  // who chose it: "sgemm-tune 0.1.0, model-guided", "...; merged from a.db"
    // What narrowed the search that chose it ("--families decode", "--max-candidates 20,
    // reached"); empty for a search as wide as the default one. A full search replaces it.
    std::string narrowed_by;
    std::string tuned_at;    // ISO 8601 UTC; left empty, the store writes the current time
    double speedup = 0.0, tflops = 0.0;  // read back: computed by the database (compute_figures)

    // "1d1bb541 M=1 N=4096 K=4096 NN fp32 align16 naive BLOCK_X=32 BLOCK_Y=8": the row, in messages.
    std::string where() const { return device_id.substr(0, 8) + " " + shape.to_string() + " " + kernel.description; }
};

// Sets `w`'s speedup and tflops as the database's generated columns compute them
// (0001_initial.sql), for a winner read from elsewhere than a database: an import's row,
// whose figures the import's report gives (they read 0).
void compute_figures(Winner& w);

// A winner with its binary, as dispatch loads it. The binary is absent for cuBLAS winners;
// the schema requires every other winner's binary to be in the cache, so it is absent for
// another winner only in a file edited by hand (dispatch then compiles it, and says so).
struct WinnerWithBinary {
    Winner winner;
    std::optional<Binary> binary;
};

// A shape key dispatch met without an exact winner.
struct Miss {
    std::string device_id;
    ShapeKey shape;
    std::int64_t count = 0;
    std::string first_seen, last_seen;
    std::string recorder;  // who counted them (TuningStore::record_misses_as); "" in a sum over recorders
};

}  // namespace sgemm
