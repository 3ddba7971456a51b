// Summing up a launch's per-block timeline (tuner/timeline.h) without a GPU: synthetic
// marks in, the numbers sgemm-bench --timeline prints out, and refusals of marks that
// cannot come from a timeline build.
#include <gtest/gtest.h>

#include "src/util/error.h"
#include "tuner/timeline.h"

using namespace sgemm;

namespace {

// A block that started at `start` ns, ended its loop at `loop_end` and ended at `end`.
BlockTimeline block(unsigned sm, std::uint64_t start, std::uint64_t loop_end, std::uint64_t end) {
    BlockTimeline b;
    b.sm = sm;
    b.at[SGEMM_MARK_START] = start;
    b.at[SGEMM_MARK_LOOP_END] = loop_end;
    b.at[SGEMM_MARK_END] = end;
    return b;
}

// The same with the split-K marks: partial stored, counted in; `summed` when it summed.
BlockTimeline split_block(unsigned sm, std::uint64_t start, std::uint64_t loop_end, std::uint64_t stored,
                          std::uint64_t arrived, std::uint64_t end, bool summed) {
    BlockTimeline b = block(sm, start, loop_end, end);
    b.at[SGEMM_MARK_PARTIAL_STORED] = stored;
    b.at[SGEMM_MARK_ARRIVED] = arrived;
    b.summed = summed;
    return b;
}

}  // namespace

TEST(Timeline, SummarizesBlocksPerSmAndTheLastLoopAndEnd) {
    LaunchTimeline t;
    t.event_us = 25.0;
    t.blocks = {block(0, 1'000'000, 1'010'000, 1'011'000), block(0, 1'000'500, 1'015'000, 1'016'000),
                block(7, 1'000'200, 1'012'000, 1'020'500)};
    const TimelineSummary s = summarize(t);
    EXPECT_EQ(s.blocks, 3);
    EXPECT_EQ(s.sms, 2);
    EXPECT_EQ(s.fewest_blocks_per_sm, 1);
    EXPECT_EQ(s.most_blocks_per_sm, 2);
    EXPECT_DOUBLE_EQ(s.event_us, 25.0);
    EXPECT_DOUBLE_EQ(s.loops_end_us, 15.0);  // from the first start, 1'000'000
    EXPECT_DOUBLE_EQ(s.last_end_us, 20.5);
    EXPECT_EQ(s.summing_blocks, 0);
    const std::string text = describe(s);
    EXPECT_NE(text.find("3 blocks on 2 SMs (1 to 2 each)"), std::string::npos) << text;
    EXPECT_NE(text.find("main loops end by 15.0 us, the last block at 20.5 us; kernel 25.0 us"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("split-K"), std::string::npos) << text;
}

TEST(Timeline, SplitKPhasesAreMediansOverTheBlocksThatSummed) {
    LaunchTimeline t;
    t.event_us = 40.0;
    t.blocks = {
        // Blocks that left their tile to another: not counted in the phases.
        split_block(0, 100, 10'000, 10'500, 11'000, 11'000, false),
        split_block(1, 100, 10'000, 10'500, 11'000, 11'000, false),
        // Three that summed: stored 1, 2 and 9 us after their loops, and so on.
        split_block(2, 100, 20'000, 21'000, 21'500, 24'500, true),
        split_block(3, 100, 20'000, 22'000, 23'000, 27'000, true),
        split_block(4, 100, 20'000, 29'000, 32'000, 33'000, true),
    };
    const TimelineSummary s = summarize(t);
    EXPECT_EQ(s.summing_blocks, 3);
    EXPECT_DOUBLE_EQ(s.store_us, 2.0);   // median of 1, 2, 9
    EXPECT_DOUBLE_EQ(s.arrive_us, 1.0);  // of 0.5, 1, 3
    EXPECT_DOUBLE_EQ(s.sum_us, 3.0);     // of 3, 4, 1
    EXPECT_DOUBLE_EQ(s.last_end_us, 32.9);
    const std::string text = describe(s);
    EXPECT_NE(text.find("the 3 blocks that summed their tile (medians): partial stored 2.00 us after their loop, "
                        "counted in 1.00 us later, summed and wrote C in 3.00 us"),
              std::string::npos)
        << text;
}

TEST(Timeline, RefusesMarksThatNoTimelineBuildLeaves) {
    LaunchTimeline zeros;  // what a product build leaves in the zeroed words
    zeros.blocks.resize(4);
    EXPECT_THROW(summarize(zeros), Error);

    LaunchTimeline backwards;
    backwards.blocks = {block(0, 5'000, 4'000, 6'000)};
    EXPECT_THROW(summarize(backwards), Error);

    LaunchTimeline summed_without_marks;
    BlockTimeline b = block(0, 1'000, 2'000, 3'000);
    b.summed = true;
    summed_without_marks.blocks = {b};
    EXPECT_THROW(summarize(summed_without_marks), Error);

    EXPECT_THROW(summarize(LaunchTimeline{}), Error);
}
