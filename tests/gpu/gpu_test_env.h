// Shared by the GPU suites: skip with the reason when no device is visible, else hand out
// the device, a stream and a cuBLAS handle.
#pragma once
#include <gtest/gtest.h>

#include <memory>

#include "src/cuda/cublas_handle.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"

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

}  // namespace sgemm::testing

// Skips the current test, with the reason, when no CUDA device is visible.
#define SGEMM_REQUIRE_GPU(ctx)                                                   \
    std::string sgemm_skip_reason_;                                              \
    ::sgemm::testing::GpuContext* ctx = ::sgemm::testing::gpu_context(sgemm_skip_reason_); \
    if (!ctx) GTEST_SKIP() << "GPU test skipped: " << sgemm_skip_reason_
