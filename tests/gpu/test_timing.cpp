// The timing's cache flush on the GPU (tuner/timing.h): every flush runs each segment of
// the instruction-cache evictor on every SM. (Its code size is checked off the GPU in
// tests/tuner/test_instruction_cache_evictor.cpp; what the eviction does to a GEMM's time is
// measured in docs/RESULTS.md, not here.)
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "src/cuda/check.h"
#include "src/cuda/device_buffer.h"
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

// The tuner's adaptive timing: 2 warm-ups and 3 timed runs, then a candidate slower than
// reject_factor times the best so far is rejected there; else batches of 5 runs, from 10 runs
// to at most 43, until the median settles.
TEST(TimeAdaptive, RejectsASlowCandidateAfterThreeRunsAndTimesTheOthersInBatchesOfFive) {
    SGEMM_REQUIRE_GPU(gpu);
    CacheFlusher flusher(gpu->device);
    int launches = 0;
    // Some work between the events (tens of us): empty, two records may read 0 ms apart,
    // which no best time would reject.
    DeviceBuffer<unsigned char> work(std::size_t{64} << 20);
    const auto launch = [&](cudaStream_t s) {
        ++launches;
        SGEMM_CUDA_CHECK(cudaMemsetAsync(work.data(), 0, work.size(), s));
    };
    const AdaptiveTiming slow = time_adaptive(launch, 1e-12, 1.5, flusher, gpu->stream.get());
    EXPECT_TRUE(slow.rejected);
    EXPECT_EQ(launches, 5);
    EXPECT_EQ(slow.stats.runs, 3);

    launches = 0;
    const AdaptiveTiming first = time_adaptive(launch, 0.0, 1.5, flusher, gpu->stream.get());  // no best yet
    EXPECT_FALSE(first.rejected);
    EXPECT_GE(first.stats.runs, 13);  // 3, then at least two batches: a median to compare
    EXPECT_LE(first.stats.runs, 43);
    EXPECT_EQ(first.stats.runs % 5, 3);
    EXPECT_EQ(launches, 2 + first.stats.runs);
}

// The plan's counts are kept: as many untimed runs as asked within the budget (none too), and never more timed
// runs than asked, even when a slow first run would set a floor of 3 under --max-seconds.
TEST(TimeRuns, MakesTheWarmUpsAndAtMostTheRunsThePlanAsksFor) {
    SGEMM_REQUIRE_GPU(gpu);
    CacheFlusher flusher(gpu->device);
    int launches = 0;
    const auto launch = [&](cudaStream_t) { ++launches; };
    struct Case {
        int warmup, iters;
        double max_seconds;
        int launches, runs;
    };
    for (const Case c : {Case{2, 1, 10.0, 3, 1}, Case{1, 2, 1e-9, 3, 2}, Case{0, 4, 1e-9, 4, 4}, Case{1, 5, 10.0, 6, 5}}) {
        launches = 0;
        TimingPlan plan;
        plan.warmup = c.warmup, plan.iters = c.iters, plan.max_seconds = c.max_seconds;
        const TimingStats stats = time_runs(launch, plan, flusher, gpu->stream.get());
        EXPECT_EQ(launches, c.launches) << "warmup " << c.warmup << ", iters " << c.iters;
        EXPECT_EQ(stats.runs, c.runs) << "warmup " << c.warmup << ", iters " << c.iters;
    }
}

// The warm-ups spend --max-seconds too: a warm-up count of a thousand on a 20 ms run stops once
// the 100 ms budget is used (5 runs), and the timed runs then get their floor of 3, not 50.
TEST(TimeRuns, WarmUpsStopOnceTheyHaveUsedTheBudget) {
    SGEMM_REQUIRE_GPU(gpu);
    CacheFlusher flusher(gpu->device);
    int launches = 0;
    // A host function holds the stream for 20 ms between the events, as a slow kernel would.
    const auto launch = [&](cudaStream_t s) {
        ++launches;
        SGEMM_CUDA_CHECK(cudaLaunchHostFunc(
            s, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }, nullptr));
    };
    TimingPlan plan;
    plan.warmup = 1000, plan.iters = 50, plan.max_seconds = 0.1;
    const TimingStats stats = time_runs(launch, plan, flusher, gpu->stream.get());
    EXPECT_EQ(stats.runs, 3);
    EXPECT_GE(stats.median_ms, 19.0) << "the events did not time the host function";
    EXPECT_GE(launches - stats.runs, 1);
    EXPECT_LE(launches - stats.runs, 5) << "warm-ups went on past the budget";
}

// The budget counts the cache flush before each run: for an empty launch that flush is all
// of a round's time, and a budget of 20 ms holds about as many rounds as flushes fit in it
// (counted by the launches alone, it held thousands).
TEST(TimeRuns, TheBudgetCountsTheCacheFlushes) {
    SGEMM_REQUIRE_GPU(gpu);
    CacheFlusher flusher(gpu->device);
    const auto empty = [](cudaStream_t) {};
    std::vector<double> flush_ms;
    for (int i = 0; i < 5; ++i) flush_ms.push_back(time_one_run([&](cudaStream_t s) { flusher.flush(s); }, flusher, gpu->stream.get()));
    const double one_flush_ms = median_of(flush_ms);
    TimingPlan plan;
    plan.warmup = 1, plan.iters = 100000, plan.max_seconds = 0.02;
    const TimingStats stats = time_runs(empty, plan, flusher, gpu->stream.get());
    EXPECT_LE(stats.runs, 1.5 * 20.0 / one_flush_ms + 3) << "a flush takes " << one_flush_ms << " ms";
}

// Launches timed in alternation run in turn, each round every one once, each round starting
// at the next launch, and each gets its own median: a 20 ms launch and an empty one keep
// their times apart. The budget counts whole rounds: a 20 ms round leaves 70 ms of a 90 ms
// budget after the warm-up round, room for 3 rounds, in either order.
TEST(TimeInAlternation, RunsTheLaunchesInTurnAndTimesEachApart) {
    SGEMM_REQUIRE_GPU(gpu);
    CacheFlusher flusher(gpu->device);
    std::string order;
    const auto slow = [&](cudaStream_t s) {
        order += 's';
        SGEMM_CUDA_CHECK(cudaLaunchHostFunc(
            s, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }, nullptr));
    };
    const auto fast = [&](cudaStream_t) { order += 'f'; };
    TimingPlan plan;
    plan.warmup = 1, plan.iters = 50, plan.max_seconds = 0.09;
    for (const bool slow_first : {true, false}) {
        order.clear();
        const std::vector<TimingStats> stats = time_in_alternation(
            slow_first ? std::vector<std::function<void(cudaStream_t)>>{slow, fast}
                       : std::vector<std::function<void(cudaStream_t)>>{fast, slow},
            plan, flusher, gpu->stream.get());
        ASSERT_EQ(stats.size(), 2u);
        const TimingStats& slow_stats = stats[slow_first ? 0 : 1];
        const TimingStats& fast_stats = stats[slow_first ? 1 : 0];
        EXPECT_EQ(slow_stats.runs, 3) << "slow first: " << slow_first;
        EXPECT_EQ(fast_stats.runs, 3) << "slow first: " << slow_first;
        EXPECT_GE(slow_stats.median_ms, 19.0) << "the slow launch's events did not time it";
        EXPECT_LT(fast_stats.median_ms, 5.0) << "the fast launch was timed with the slow one's work";
        EXPECT_EQ(order, slow_first ? "sfsffssf" : "fsfssffs") << "one warm-up round, then 3 rounds in turn";
    }
}
