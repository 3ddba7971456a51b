// What the tools say when no GPU can be used: CI's machines have no driver at all.
#include <gtest/gtest.h>
#include <cuda_runtime.h>

#include <string>

#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/driver_contexts.h"
#include "src/util/error.h"

using namespace sgemm;

TEST(NoDeviceReason, TellsAMissingDriverFromAnOldOne) {
    EXPECT_EQ(no_device_reason(cudaErrorInsufficientDriver, 0, 13000), "no NVIDIA driver is installed");
    EXPECT_EQ(no_device_reason(cudaErrorInsufficientDriver, 12040, 13000),
              "the NVIDIA driver supports CUDA 12.4, older than this build's runtime, 13.0");
    EXPECT_EQ(no_device_reason(cudaSuccess, 13000, 13000), "the driver reports 0 devices");
    EXPECT_EQ(no_device_reason(cudaErrorNoDevice, 13000, 13000), cudaGetErrorString(cudaErrorNoDevice));
}

// Without a driver the message must not send the user to upgrade one.
TEST(DeviceCount, WithoutADriverSaysSo) {
    int driver = 0;
    cudaDriverGetVersion(&driver);
    if (driver != 0) GTEST_SKIP() << "an NVIDIA driver is installed (CUDA " << driver << "): this checks a machine without one";
    try {
        device_count();
        FAIL() << "device_count() found a device without a driver";
    } catch (const NoDeviceError& e) {
        EXPECT_EQ(std::string(e.what()), "no CUDA device is visible (no NVIDIA driver is installed)");
    }
}

// The driver's contexts are reached through the runtime's entry points: without a driver
// nothing is known, and nothing fails loudly.
TEST(DriverContexts, WithoutADriverNothingIsKnown) {
    int driver = 0;
    cudaDriverGetVersion(&driver);
    if (driver != 0) GTEST_SKIP() << "an NVIDIA driver is installed (CUDA " << driver << "): this checks a machine without one";
    EXPECT_EQ(driver_symbol("cuCtxGetCurrent"), nullptr);
    EXPECT_FALSE(current_context().has_value());
    EXPECT_FALSE(make_current(nullptr));
    EXPECT_FALSE(context_of_stream(cudaStreamLegacy).has_value());
}

// Only a machine without a GPU for CUDA is "no device": a driver that fails to reach the GPUs
// it has (its library and kernel module differ, a container lacks the device nodes) was
// reported as none, which an engine takes for "run on the CPU".
TEST(DeviceCount, OnlyNoGpuOrNoDriverIsNoDevice) {
    for (const cudaError_t none : {cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorStubLibrary})
        EXPECT_TRUE(means_no_device(none)) << cudaGetErrorName(none);
    for (const cudaError_t failing : {cudaErrorSystemDriverMismatch, cudaErrorUnknown, cudaErrorInitializationError,
                                      cudaErrorDevicesUnavailable, cudaErrorCompatNotSupportedOnDevice})
        EXPECT_FALSE(means_no_device(failing)) << cudaGetErrorName(failing);

    try {
        throw_count_failure(cudaSuccess, 13000, 13000);
    } catch (const NoDeviceError& e) {
        EXPECT_EQ(std::string(e.what()), "no CUDA device is visible (the driver reports 0 devices)");
    }
    EXPECT_THROW(throw_count_failure(cudaErrorInsufficientDriver, 0, 13000), NoDeviceError);
    try {
        throw_count_failure(cudaErrorSystemDriverMismatch, 12040, 13000);
    } catch (const NoDeviceError& e) {
        FAIL() << "a driver that does not match its kernel module was taken for no device: " << e.what();
    } catch (const CudaError& e) {
        EXPECT_EQ(std::string(e.what()), std::string("CUDA could not reach the GPUs (cudaGetDeviceCount: "
                                                     "cudaErrorSystemDriverMismatch: ") +
                                             cudaGetErrorString(cudaErrorSystemDriverMismatch) +
                                             "); the driver supports CUDA 12.4, this build's runtime is 13.0");
    }
}
