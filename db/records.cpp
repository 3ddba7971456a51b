#include "db/records.h"

#include <algorithm>
#include <cstdio>

#include "db/version_numbers.h"
#include "src/util/error.h"
#include "src/util/hash.h"
#include "src/util/text.h"

namespace sgemm {

namespace {

// 13000 -> "13.0", as CUDA prints its versions.
std::string cuda_version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

std::string DeviceFingerprint::id() const {
    Fnv1a64 h;
    h.add(gpu_name)
        .add(std::to_string(cc_major))
        .add(std::to_string(cc_minor))
        .add(std::to_string(sm_count))
        .add(std::to_string(memory_bytes))
        .add(std::to_string(driver_version))
        .add(std::to_string(runtime_version))
        .add(nvrtc_version)
        .add(library_version);
    return h.hex();
}

std::string DeviceFingerprint::describe() const {
    char memory[32];
    std::snprintf(memory, sizeof memory, "%.0f GiB", static_cast<double>(memory_bytes) / (1024.0 * 1024 * 1024));
    return gpu_name + " sm_" + std::to_string(sm()) + ", " + std::to_string(sm_count) + " SMs, " + memory +
           ", driver " + cuda_version_text(driver_version) + ", CUDA " + cuda_version_text(runtime_version) +
           ", NVRTC " + nvrtc_version + ", sgemm " + library_version;
}

bool same_gpu(const DeviceFingerprint& a, const DeviceFingerprint& b) {
    return a.gpu_name == b.gpu_name && a.cc_major == b.cc_major && a.cc_minor == b.cc_minor && a.sm_count == b.sm_count;
}

bool earlier_build(const DeviceFingerprint& other, const DeviceFingerprint& current) {
    if (!same_gpu(other, current)) return false;
    const auto numbers = [](const DeviceFingerprint& d) {
        return std::vector<std::vector<long>>{version_numbers(d.library_version), {d.driver_version},
                                              {d.runtime_version}, version_numbers(d.nvrtc_version)};
    };
    const std::vector<std::vector<long>> older = numbers(other), newer = numbers(current);
    bool some_older = false;
    for (std::size_t i = 0; i < older.size(); ++i) {
        if (newer[i] < older[i]) return false;
        some_older = some_older || older[i] < newer[i];
    }
    return some_older;
}

std::string build_differences(const DeviceFingerprint& other, const DeviceFingerprint& current) {
    std::vector<std::string> fields;
    if (other.driver_version != current.driver_version) fields.push_back("driver " + cuda_version_text(other.driver_version));
    if (other.runtime_version != current.runtime_version) fields.push_back("CUDA " + cuda_version_text(other.runtime_version));
    if (other.nvrtc_version != current.nvrtc_version) fields.push_back("NVRTC " + other.nvrtc_version);
    if (other.library_version != current.library_version) fields.push_back("sgemm " + other.library_version);
    // Left last: a driver may report a GPU's memory a little differently.
    if (other.memory_bytes != current.memory_bytes) fields.push_back(std::to_string(other.memory_bytes) + " bytes of memory");
    std::string out;
    for (const std::string& f : fields) out += (out.empty() ? "" : ", ") + f;
    return out;
}

KernelRef KernelRef::cublas() { return KernelRef{"cublas", {}, "cuBLAS", ""}; }

std::string params_text(const std::vector<int>& params) {
    std::string out;
    for (std::size_t i = 0; i < params.size(); ++i) out += (i ? "," : "") + std::to_string(params[i]);
    return out;
}

std::vector<int> parse_params(const std::string& text) {
    std::vector<int> out;
    if (text.empty()) return out;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        std::size_t used = 0;
        int value = 0;
        try {
            value = std::stoi(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (item.empty() || used != item.size())
            throw Error("parameter list " + single_quoted(text) + ": " + single_quoted(item) + " is not an integer");
        out.push_back(value);
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

std::string cubin_checksum(const std::vector<char>& cubin) {
    return Fnv1a64().add(std::string(cubin.begin(), cubin.end())).hex();
}

std::vector<KernelRef> kernels_that_faulted(const std::vector<Measurement>& measured) {
    const auto a_fault = [](const Measurement& m) {
        return !m.valid && m.invalid_reason.rfind(kFaultedReason, 0) == 0 && m.tuner_version == SGEMM_VERSION;
    };
    std::vector<KernelRef> out;
    for (const Measurement& fault : measured) {
        if (!a_fault(fault) || std::find(out.begin(), out.end(), fault.kernel) != out.end()) continue;
        // The kernel's last fault and last valid measurement, by the times the store wrote (ISO
        // 8601, milliseconds, so they sort as text). A fault and a pass in one millisecond
        // leave the fault standing: a kernel timed valid and then faulting in the re-timing
        // can be that quick.
        std::string last_fault, last_valid;
        for (const Measurement& m : measured) {
            if (!(m.kernel == fault.kernel) || m.tuner_version != SGEMM_VERSION) continue;
            if (a_fault(m)) last_fault = std::max(last_fault, m.measured_at);
            if (m.valid) last_valid = std::max(last_valid, m.measured_at);
        }
        const bool passed_since = !last_valid.empty() && last_valid > last_fault;
        if (!passed_since) out.push_back(fault.kernel);
    }
    return out;
}

bool faulted_in(const KernelRef& kernel, const std::vector<Measurement>& measured) {
    const std::vector<KernelRef> faulted = kernels_that_faulted(measured);
    return std::find(faulted.begin(), faulted.end(), kernel) != faulted.end();
}

void compute_figures(Winner& w) {
    w.speedup = w.cublas_ms / w.ms;
    w.tflops = 2.0 * w.shape.M * w.shape.N * w.shape.K / (w.ms * 1e9);
}

}  // namespace sgemm
