// The timing's median (tuner/timing.h), which sgemm-bench and sgemm-dispatch-bench report:
// of an even count, the mean of the middle two (the upper one alone reported the larger).
#include <gtest/gtest.h>

#include <vector>

#include "tuner/timing.h"

using namespace sgemm;

TEST(MedianOf, IsTheMiddleValueOrTheMeanOfTheMiddleTwo) {
    std::vector<double> one{5.0}, odd{3.0, 1.0, 2.0}, even{4.0, 1.0, 3.0, 2.0}, two{1.0, 9.0};
    EXPECT_EQ(median_of(one), 5.0);
    EXPECT_EQ(median_of(odd), 2.0);
    EXPECT_EQ(median_of(even), 2.5);
    EXPECT_EQ(median_of(two), 5.0);
}
