#include "db/records.h"

#include <algorithm>
#include <cstdio>

#include "src/util/error.h"
#include "src/util/hash.h"

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
            throw Error("parameter list '" + text + "': '" + item + "' is not an integer");
        out.push_back(value);
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

bool faulted_in(const KernelRef& kernel, const std::vector<Measurement>& measured) {
    return std::any_of(measured.begin(), measured.end(), [&](const Measurement& m) {
        return !m.valid && m.invalid_reason.rfind(kFaultedReason, 0) == 0 && m.tuner_version == SGEMM_VERSION &&
               m.kernel == kernel;
    });
}

}  // namespace sgemm
