// The GPU suites' own judgement of a missing GPU: where CUDA_VISIBLE_DEVICES hides every GPU a
// test may skip, but where it shows one (a scheduler's "0") CUDA failing to use that GPU must
// fail the tests. Runs on the CPU, in CI too.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "tests/gpu/gpu_test_env.h"

namespace {

using sgemm::testing::cuda_visible_devices_hides_every_gpu;
using sgemm::testing::ScopedEnvironmentVariable;

TEST(GpuTestEnv, CudaVisibleDevicesHidesEveryGpuOnlyWhereItNamesNone) {
    const int installed = 2;
    struct Case {
        std::optional<std::string> value;
        bool hides;
    };
    const Case cases[] = {
        {std::nullopt, false}, {"0", false},  {"1", false},        {"1,0", false},
        {"GPU-8f3c", false},   {"MIG-1", false}, {"", true},        {"-1", true},         {"none", true},
        {"2", true},           {"7,0", true},  {"NoDevFiles", true}, {"99999999999", true}, {",0", true},
    };
    for (const Case& c : cases) {
        const ScopedEnvironmentVariable scope("CUDA_VISIBLE_DEVICES", c.value);
        EXPECT_EQ(cuda_visible_devices_hides_every_gpu(installed), c.hides)
            << "CUDA_VISIBLE_DEVICES=" << (c.value ? "'" + *c.value + "'" : "(unset)");
    }
}

}  // namespace
