// The timing's cache flush on the GPU (tuner/timing.h): every flush runs each segment of
// the instruction-cache evictor on every SM. (Its code size is checked off the GPU in
// tests/tuner/test_instruction_cache_evictor.cpp; what the eviction does to a GEMM's time is
// measured in docs/RESULTS.md, not here.)
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "tests/gpu/gpu_test_env.h"
#include "tuner/timing.h"

using namespace sgemm;

TEST(CacheFlusher, RunsEverySegmentOfTheEvictorOnEverySm) {
    SGEMM_REQUIRE_GPU(gpu);
    CacheFlusher flusher(gpu->device);
    for (int flush = 0; flush < 3; ++flush) {
        flusher.flush(gpu->stream.get());
        // Each flush resets what the last one recorded, so each is checked on its own.
        const std::vector<int> warp_sm = flusher.evictor().warp_sms();
        const int warps = static_cast<int>(warp_sm.size()) / (2 * gpu->device.sm_count);
        ASSERT_EQ(warps, 16);
        for (int segment = 0; segment < warps; ++segment) {
            std::set<int> sms;
            for (std::size_t i = segment; i < warp_sm.size(); i += warps) sms.insert(warp_sm[i]);
            EXPECT_EQ(sms.count(-1), 0u) << "flush " << flush << ": a warp of segment " << segment << " did not run";
            EXPECT_EQ(static_cast<int>(sms.size()), gpu->device.sm_count)
                << "flush " << flush << " ran segment " << segment << " on " << sms.size() << " SMs of "
                << gpu->device.sm_count;
        }
    }
}
