// The timing's cache flush on the GPU (tuner/timing.h): every flush runs the instruction-
// cache evictor's whole code on every SM. (Its code size is checked off the GPU in
// tests/tuner/test_instruction_cache_evictor.cpp; what the eviction does to a GEMM's time is
// measured in docs/RESULTS.md, not here.)
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "tests/gpu/gpu_test_env.h"
#include "tuner/timing.h"

using namespace sgemm;

TEST(CacheFlusher, RunsTheEvictorOnEverySm) {
    SGEMM_REQUIRE_GPU(gpu);
    CacheFlusher flusher(gpu->device);
    for (int flush = 0; flush < 3; ++flush) {
        flusher.flush(gpu->stream.get());
        const std::vector<int> block_sm = flusher.evictor().block_sms();
        const std::set<int> sms(block_sm.begin(), block_sm.end());
        EXPECT_EQ(sms.count(-1), 0u) << "a block of flush " << flush << " did not run";
        EXPECT_EQ(static_cast<int>(sms.size()), gpu->device.sm_count)
            << "flush " << flush << " ran the evictor on " << sms.size() << " SMs of " << gpu->device.sm_count;
    }
}
