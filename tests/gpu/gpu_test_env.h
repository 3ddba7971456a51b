// Shared by the GPU suites: skip with the reason when no device is visible, else hand out
// the device, a stream and a cuBLAS handle.
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <memory>

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

// The process-wide context, or nullptr with `why` set when there is no usable GPU.
inline GpuContext* gpu_context(std::string& why) {
    static std::string reason;
    static std::unique_ptr<GpuContext> context = []() -> std::unique_ptr<GpuContext> {
        try {
            DeviceInfo device = use_device(0);
            return std::unique_ptr<GpuContext>(new GpuContext{device, Stream(), CublasHandle()});
        } catch (const NoDeviceError& e) {
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

// Skips the current test, with the reason, when no CUDA device is visible.
#define SGEMM_REQUIRE_GPU(ctx)                                                   \
    std::string sgemm_skip_reason_;                                              \
    ::sgemm::testing::GpuContext* ctx = ::sgemm::testing::gpu_context(sgemm_skip_reason_); \
    if (!ctx) GTEST_SKIP() << "GPU test skipped: " << sgemm_skip_reason_
