// Shared by the GPU suites: skip with the reason when no device is visible, else hand out
// the device, a stream and a cuBLAS handle.
#pragma once
#include <glob.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "src/cuda/cublas_handle.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/families/registry.h"
#include "src/jit/loaded_kernel.h"

namespace sgemm::testing {

struct GpuContext {
    DeviceInfo device;
    Stream stream;
    CublasHandle cublas;
};

// Whether CUDA_VISIBLE_DEVICES hides all of the `installed` GPUs. CUDA reads its entries in
// order and stops at the first that names no device, so the list shows none where its first
// entry is neither a GPU's index nor a UUID (GPU-..., MIG-...): empty, -1, "none", an index
// past the last GPU. Any other value shows a GPU, as a scheduler's "0" or "2,3" does.
inline bool cuda_visible_devices_hides_every_gpu(int installed) {
    const char* const value = std::getenv("CUDA_VISIBLE_DEVICES");
    if (!value) return false;
    const std::string first(value, std::strcspn(value, ","));
    if (first.rfind("GPU-", 0) == 0 || first.rfind("MIG-", 0) == 0) return false;
    const bool index = !first.empty() && first.size() <= 4 && first.find_first_not_of("0123456789") == std::string::npos;
    return !index || std::stoi(first) >= installed;
}

// Sets an environment variable (unsets it for nullopt) for one scope, then puts back what was
// there: for the processes a test starts (a threadsafe death test's among them), or what the
// test reads itself.
class ScopedEnvironmentVariable {
public:
    ScopedEnvironmentVariable(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
        if (const char* old = std::getenv(name_.c_str())) old_ = old;
        set(value);
    }
    ~ScopedEnvironmentVariable() { set(old_); }
    ScopedEnvironmentVariable(const ScopedEnvironmentVariable&) = delete;
    ScopedEnvironmentVariable& operator=(const ScopedEnvironmentVariable&) = delete;

private:
    void set(const std::optional<std::string>& value) const {
        if (value) setenv(name_.c_str(), value->c_str(), 1);
        else unsetenv(name_.c_str());
    }

    std::string name_;
    std::optional<std::string> old_;
};

// Why a GPU test that found no usable device must fail rather than skip, or "" where skipping
// is right: a GPU is installed (a /dev/nvidiaN node) and nothing hides it, so CUDA failing to
// use it (a driver older than the runtime, a GPU in exclusive use) is a fault to see, not a
// machine without a GPU, where CI skips every GPU test.
inline std::string installed_gpu_unused(const std::string& why) {
    glob_t nodes{};
    const int installed = glob("/dev/nvidia[0-9]*", 0, nullptr, &nodes) == 0 ? static_cast<int>(nodes.gl_pathc) : 0;
    globfree(&nodes);
    if (installed == 0 || cuda_visible_devices_hides_every_gpu(installed)) return "";
    return "a GPU is installed (/dev/nvidiaN) but CUDA cannot use it: " + why;
}

// The process-wide context, or nullptr with `why` set when there is no usable GPU.
inline GpuContext* gpu_context(std::string& why) {
    static std::string reason;
    static std::unique_ptr<GpuContext> context = []() -> std::unique_ptr<GpuContext> {
        try {
            DeviceInfo device = use_device(0);
            return std::unique_ptr<GpuContext>(new GpuContext{device, Stream(), CublasHandle()});
        } catch (const NoDeviceError& e) {  // a CudaError (CUDA failing a GPU that is there) fails the test
            reason = e.what();
            return nullptr;
        }
    }();
    why = reason;
    return context.get();
}

// A family's kernel at `values` (its defaults when empty), compiled and loaded once per
// test binary: compiling is the slow part of the GPU suites.
inline const LoadedKernel& loaded_kernel(const std::string& family_name, const ParamValues& values,
                                         const DeviceInfo& device) {
    static std::map<std::pair<std::string, ParamValues>, std::unique_ptr<LoadedKernel>> cache;
    const Family& f = find_family(family_name);
    const ParamValues chosen = values.empty() ? f.defaults : values;
    auto& slot = cache[{family_name, chosen}];
    if (!slot) slot = std::make_unique<LoadedKernel>(f, compile_kernel(f, chosen, Arch{device.sm()}));
    return *slot;
}

}  // namespace sgemm::testing

// Skips the current test, with the reason, when no CUDA device is visible; fails it where a
// GPU is installed that CUDA cannot use (installed_gpu_unused).
#define SGEMM_REQUIRE_GPU(ctx)                                                                  \
    std::string sgemm_skip_reason_;                                                             \
    ::sgemm::testing::GpuContext* ctx = ::sgemm::testing::gpu_context(sgemm_skip_reason_);      \
    if (!ctx && !::sgemm::testing::installed_gpu_unused(sgemm_skip_reason_).empty())            \
        GTEST_FAIL() << ::sgemm::testing::installed_gpu_unused(sgemm_skip_reason_);             \
    if (!ctx) GTEST_SKIP() << "GPU test skipped: " << sgemm_skip_reason_
