#include <gtest/gtest.h>

#include "tools/cli_progress.h"

using sgemm::SteadyLines;
using std::chrono::seconds;

TEST(SteadyLines, ALineAtMostOnceAnIntervalFromTheStart) {
    SteadyLines lines(seconds(30));
    const SteadyLines::Clock::time_point start{seconds(1000)};
    lines.restart(start);
    EXPECT_FALSE(lines.due(start));
    EXPECT_FALSE(lines.due(start + seconds(29)));
    EXPECT_TRUE(lines.due(start + seconds(30)));
    EXPECT_FALSE(lines.due(start + seconds(31)));  // the next interval counts from the line
    EXPECT_FALSE(lines.due(start + seconds(59)));
    EXPECT_TRUE(lines.due(start + seconds(75)));
    EXPECT_FALSE(lines.due(start + seconds(100)));
}

TEST(SteadyLines, ANewPieceOfWorkWaitsAWholeInterval) {
    SteadyLines lines(seconds(30));
    const SteadyLines::Clock::time_point start{seconds(1000)};
    lines.restart(start);
    EXPECT_TRUE(lines.due(start + seconds(40)));
    lines.restart(start + seconds(50));
    EXPECT_FALSE(lines.due(start + seconds(71)));  // 70 s after the last line, 21 s into the new work
    EXPECT_TRUE(lines.due(start + seconds(80)));
}
