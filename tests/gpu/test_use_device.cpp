// use_device (src/cuda/device.h) with an ordinal past the GPUs: the user's argument, which the
// tools report with exit status 1, told apart from no GPU at all (NoDeviceError, exit 2).
#include <gtest/gtest.h>

#include <string>

#include "src/cuda/device.h"
#include "src/util/error.h"
#include "tests/gpu/gpu_test_env.h"

using namespace sgemm;

TEST(UseDevice, AnOrdinalPastTheLastIsNoSuchDevice) {
    SGEMM_REQUIRE_GPU(gpu);
    const int count = device_count();
    const std::string visible = count == 1 ? "1 CUDA device is visible, device 0"
                                           : std::to_string(count) + " CUDA devices are visible, 0 to " +
                                                 std::to_string(count - 1);
    try {
        use_device(count);
        FAIL() << "use_device(" << count << ") found a device past the last";
    } catch (const NoSuchDeviceError& e) {
        EXPECT_EQ(std::string(e.what()), "device " + std::to_string(count) + " does not exist: " + visible);
    }
    // The device the tests run on is still current and usable.
    EXPECT_EQ(use_device(gpu->device.ordinal).name, gpu->device.name);
}
