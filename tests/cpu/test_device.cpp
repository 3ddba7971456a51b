// What the tools say when no GPU can be used: CI's machines have no driver at all.
#include <gtest/gtest.h>
#include <cuda_runtime.h>

#include <string>

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
