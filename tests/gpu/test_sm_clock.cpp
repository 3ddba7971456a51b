// The SM clock stored with each measurement (tuner/sm_clock.h): read through NVML for the
// CUDA device itself, found by its PCI bus id.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include "tests/gpu/gpu_test_env.h"
#include "tuner/sm_clock.h"

using namespace sgemm;

TEST(SmClock, ReadsTheDevicesClockAndNoneForAnOrdinalPastTheLast) {
    SGEMM_REQUIRE_GPU(gpu);
    // NVML comes with the driver, so a machine that runs CUDA has it.
    const std::optional<int> mhz = read_sm_clock_mhz(gpu->device.ordinal);
    ASSERT_TRUE(mhz.has_value()) << "no reading through libnvidia-ml.so.1 for device " << gpu->device.ordinal;
    EXPECT_GE(*mhz, 100) << "MHz";
    EXPECT_LE(*mhz, 5000) << "MHz";

    int count = 0;
    ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
    EXPECT_FALSE(read_sm_clock_mhz(count).has_value()) << "device " << count << " does not exist";
    // The failed bus-id query leaves no error behind for the next CUDA call to report.
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}
