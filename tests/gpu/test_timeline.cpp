// Timeline builds on the GPU (tuner/timeline.h, sgemm-bench --timeline): the marks must not
// change the result, every block must leave its marks in order, on a real SM, and with
// split-K exactly one block per tile must sum it. Odd shapes, so edge tiles are covered.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/gpu/gpu_test_env.h"
#include "tuner/gemm_problem.h"
#include "tuner/timeline.h"

using namespace sgemm;

namespace {

struct TimelineCase {
    std::string family;
    ParamValues values;
    int m, n, k;
};

void PrintTo(const TimelineCase& c, std::ostream* os) {
    *os << c.family;
    for (int v : c.values) *os << " " << v;
    *os << " at " << c.m << "x" << c.n << "x" << c.k;
}

class TimelineBuild : public ::testing::TestWithParam<TimelineCase> {};

TEST_P(TimelineBuild, KeepsTheResultAndLeavesOrderedMarksInEveryBlock) {
    SGEMM_REQUIRE_GPU(gpu);
    const TimelineCase& c = GetParam();
    const Family& f = find_family(c.family);
    const Arch arch{gpu->device.sm()};
    const LoadedKernel kernel(f, compile_kernel(f, c.values, arch, KernelBuild::timeline));
    ProblemSpec spec;
    spec.M = c.m, spec.N = c.n, spec.K = c.k;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    problem.reserve_workspace(timeline_workspace_bytes(kernel, c.m, c.n, c.k));

    problem.poison_output(gpu->stream.get());
    CacheFlusher flusher(gpu->device);
    const LaunchTimeline t = record_timeline(kernel, problem, flusher, gpu->stream.get());
    const Accuracy accuracy = problem.check_output();
    EXPECT_TRUE(accuracy.ok()) << accuracy.verdict();

    const LaunchGeometry g = f.geometry(c.values, c.m, c.n, c.k);
    ASSERT_EQ(t.blocks.size(), std::size_t{g.grid.x} * g.grid.y * g.grid.z);
    const TimelineSummary s = summarize(t);  // throws on a missing or backward mark
    EXPECT_LE(s.sms, gpu->device.sm_count);
    for (const BlockTimeline& b : t.blocks) EXPECT_LT(b.sm, static_cast<unsigned>(gpu->device.sm_count));
    EXPECT_GT(s.loops_end_us, 0.0);
    EXPECT_LE(s.loops_end_us, s.last_end_us);
    // The marks and the events read different clocks; the span still lies inside the launch.
    EXPECT_LE(s.last_end_us, 1.05 * s.event_us + 2.0);

    const unsigned slices = g.grid.y;
    if (slices > 1) {
        // One summing block per tile: the tiles are the blocks of one slice.
        EXPECT_EQ(static_cast<std::size_t>(s.summing_blocks), t.blocks.size() / slices);
        for (const BlockTimeline& b : t.blocks) {
            EXPECT_NE(b.at[SGEMM_MARK_PARTIAL_STORED], 0u);
            EXPECT_NE(b.at[SGEMM_MARK_ARRIVED], 0u);
        }
    } else {
        EXPECT_EQ(s.summing_blocks, 0);
        for (const BlockTimeline& b : t.blocks) EXPECT_EQ(b.at[SGEMM_MARK_PARTIAL_STORED], 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(
    WarptileAndDecode, TimelineBuild,
    ::testing::Values(TimelineCase{"warptile", {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 0, 0, 0}, 17, 1000, 4095},
                      TimelineCase{"warptile", {64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 3, 0, 0, 0, 0, 0}, 1000, 1000, 1000},
                      TimelineCase{"warptile", {64, 128, 16, 32, 64, 8, 8, 3, 0, 0, 1, 1, 0, 0, 0, 0, 0}, 1000, 1000, 1000},
                      TimelineCase{"decode", {8, 256, 8, 1, 1, 0, 8, 0, 0}, 7, 4097, 1000},
                      TimelineCase{"decode", {1, 128, 8, 2, 1, 0, 1, 0, 0}, 1, 1000, 4095}));

// Kernels share a workspace one after another (sgemm-bench runs every kernel of a shape on
// one): a timeline build without split-K must leave the split-K counters zeroed, so that a
// split-K launch after it, marked or not, still sums every tile once.
TEST(TimelineBuild, LeavesTheSplitKCountersZeroedForTheNextLaunch) {
    SGEMM_REQUIRE_GPU(gpu);
    const Arch arch{gpu->device.sm()};
    const Family& decode = find_family("decode");
    const ParamValues unsplit = {8, 128, 8, 4, 1, 0, 1, 0, 0}, split = {8, 128, 8, 4, 1, 0, 2, 0, 0};
    const LoadedKernel unsplit_timeline(decode, compile_kernel(decode, unsplit, arch, KernelBuild::timeline));
    const LoadedKernel split_timeline(decode, compile_kernel(decode, split, arch, KernelBuild::timeline));
    const LoadedKernel& split_product = ::sgemm::testing::loaded_kernel("decode", split, gpu->device);
    ProblemSpec spec;
    spec.M = 8, spec.N = 4096, spec.K = 1000;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    problem.reserve_workspace(std::max(timeline_workspace_bytes(unsplit_timeline, spec.M, spec.N, spec.K),
                                       timeline_workspace_bytes(split_timeline, spec.M, spec.N, spec.K)));
    CacheFlusher flusher(gpu->device);

    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE(round);
        problem.poison_output(gpu->stream.get());
        summarize(record_timeline(unsplit_timeline, problem, flusher, gpu->stream.get()));
        EXPECT_TRUE(problem.check_output().ok());

        problem.poison_output(gpu->stream.get());
        const TimelineSummary s = summarize(record_timeline(split_timeline, problem, flusher, gpu->stream.get()));
        EXPECT_TRUE(problem.check_output().ok());
        EXPECT_EQ(s.summing_blocks, s.blocks / 2);

        problem.poison_output(gpu->stream.get());
        split_product.launch(problem.args(), gpu->stream.get());
        EXPECT_TRUE(problem.check_output().ok());
    }
}

// A product build leaves no marks, and the summary says so rather than printing zeros.
TEST(TimelineBuild, AProductBuildIsRefused) {
    SGEMM_REQUIRE_GPU(gpu);
    const ParamValues values = {8, 256, 8, 1, 1, 0, 8, 0, 0};
    const LoadedKernel& kernel = ::sgemm::testing::loaded_kernel("decode", values, gpu->device);
    ProblemSpec spec;
    spec.M = 8, spec.N = 1024, spec.K = 1024;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    problem.reserve_workspace(timeline_workspace_bytes(kernel, spec.M, spec.N, spec.K));
    CacheFlusher flusher(gpu->device);
    EXPECT_THROW(summarize(record_timeline(kernel, problem, flusher, gpu->stream.get())), Error);
}

}  // namespace
