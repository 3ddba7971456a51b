// A decode batch's time against cuBLAS's batch-1 time for the same weights.
#include <gtest/gtest.h>

#include "tuner/batch_cost.h"

using namespace sgemm;

namespace {

ShapeOutcome outcome(int M, int N, int K, double winner_ms, double cublas_ms, bool trans_b = false) {
    ShapeOutcome o;
    o.row.key.M = M, o.row.key.N = N, o.row.key.K = K, o.row.key.trans_b = trans_b;
    o.winner.ms = winner_ms;
    o.winner.cublas_ms = cublas_ms;
    return o;
}

TEST(BatchCost, BatchesAreMeasuredAgainstCublasAtBatchOneForTheSameWeights) {
    const std::vector<ShapeOutcome> outcomes = {
        outcome(8, 4096, 4096, 0.0275, 0.0457),   // before its batch-1 shape in the file
        outcome(1, 4096, 4096, 0.0230, 0.0230),   // cuBLAS won batch 1
        outcome(1, 6144, 4096, 0.0310, 0.0320),
        outcome(32, 4096, 4096, 0.0376, 0.0474),
        outcome(32, 6144, 4096, 0.0496, 0.0571),
    };
    const std::vector<std::optional<double>> r = time_over_cublas_batch1(outcomes);
    ASSERT_EQ(r.size(), outcomes.size());
    ASSERT_TRUE(r[0].has_value());
    EXPECT_DOUBLE_EQ(*r[0], 0.0275 / 0.0230);
    EXPECT_FALSE(r[1].has_value()) << "batch 1 is the reference itself";
    EXPECT_FALSE(r[2].has_value());
    ASSERT_TRUE(r[3].has_value());
    EXPECT_DOUBLE_EQ(*r[3], 0.0376 / 0.0230);
    ASSERT_TRUE(r[4].has_value());
    EXPECT_DOUBLE_EQ(*r[4], 0.0496 / 0.0320) << "against cuBLAS's time, not the batch-1 winner's";
}

// A file may hold the batch-1 shape twice, packed and on misaligned operands: a batch is
// measured against the one of its own alignment class, and against another only where the
// file has none of its own.
TEST(BatchCost, TheBatchOneRowOfTheSameAlignmentClassComesFirst) {
    std::vector<ShapeOutcome> outcomes = {
        outcome(1, 4096, 4096, 0.0500, 0.0500),
        outcome(1, 4096, 4096, 0.0230, 0.0230),
        outcome(8, 4096, 4096, 0.0275, 0.0457),
        outcome(8, 4096, 4096, 0.0600, 0.0700),
    };
    outcomes[0].row.key.alignment = 4;
    outcomes[3].row.key.alignment = 8;
    const std::vector<std::optional<double>> r = time_over_cublas_batch1(outcomes);
    ASSERT_EQ(r.size(), outcomes.size());
    ASSERT_TRUE(r[2].has_value());
    EXPECT_DOUBLE_EQ(*r[2], 0.0275 / 0.0230);
    ASSERT_TRUE(r[3].has_value()) << "no batch-1 row of class 8: the first of the others";
    EXPECT_DOUBLE_EQ(*r[3], 0.0600 / 0.0500);
}

TEST(BatchCost, OtherWeightsOrLayoutsGiveNoRatio) {
    const std::vector<ShapeOutcome> outcomes = {
        outcome(1, 4096, 4096, 0.0230, 0.0230),
        outcome(8, 4096, 14336, 0.0720, 0.1734),       // another K
        outcome(8, 4096, 4096, 0.0275, 0.0457, true),  // B stored transposed
        outcome(8, 28672, 4096, 0.1250, 0.1739),       // another N
    };
    const std::vector<std::optional<double>> r = time_over_cublas_batch1(outcomes);
    ASSERT_EQ(r.size(), outcomes.size());
    for (std::size_t i = 1; i < r.size(); ++i) EXPECT_FALSE(r[i].has_value()) << outcomes[i].row.key.to_string();
}

}  // namespace
