// Table cells: fixed decimals, and a power of ten where those would mislead.
#include <gtest/gtest.h>

#include "tools/cli_table.h"

using namespace sgemm;

TEST(Fixed, GivesTheDecimalsAsked) {
    EXPECT_EQ(fixed(1.23456, 3), "1.235");
    EXPECT_EQ(fixed(0.0006, 3), "0.001");  // rounds up to a shown digit
    EXPECT_EQ(fixed(0, 3), "0.000");      // a true zero stays one
    EXPECT_EQ(fixed(-2.5, 1), "-2.5");
}

// A value past a billion, or one that the decimals asked for would show as 0 (a tiny model's
// GFLOP per step showed 0.000 beside its 0.0 us), takes a power of ten.
TEST(Fixed, AValueTooLargeOrTooSmallForItsDecimalsTakesAPowerOfTen) {
    EXPECT_EQ(fixed(1.5e9, 2), "1.50e+09");
    EXPECT_EQ(fixed(0.0004, 3), "4.000e-04");
    EXPECT_EQ(fixed(-0.00004, 1), "-4.0e-05");
    EXPECT_EQ(fixed(0.04, 1), "4.0e-02");
    EXPECT_EQ(fixed(0.05, 1), "0.1");
    EXPECT_EQ(fixed(0.5, 0), "5e-01") << "printf's %.0f rounds an exact half to the even 0";
    EXPECT_EQ(fixed(0.75, 0), "1");
}
