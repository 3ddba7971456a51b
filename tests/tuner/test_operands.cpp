// The operands the tuner judges a shape key on (operands_for): of exactly the key's alignment
// class, so that a winner is stored only for calls it was measured on.
#include <gtest/gtest.h>

#include "tuner/tuner.h"

using namespace sgemm;

namespace {

// Each key is judged on operands of exactly its class: tight where packed operands have it,
// else padded rows and, below 16, operands that start the class's bytes past 16.
TEST(Operands, EachKeyGetsOperandsOfItsAlignmentClass) {
    const int shapes[][3] = {{1, 4096, 4096}, {8, 4096, 4093}, {32, 4094, 4096}, {4095, 4097, 4093}, {7, 17, 1}};
    for (const auto& mnk : shapes)
        for (int ta = 0; ta < 2; ++ta)
            for (int tb = 0; tb < 2; ++tb)
                for (int alignment : {16, 8, 4}) {
                    ShapeKey key;
                    key.M = mnk[0], key.N = mnk[1], key.K = mnk[2];
                    key.trans_a = ta, key.trans_b = tb, key.alignment = alignment;
                    SCOPED_TRACE(key.to_string());
                    const ProblemSpec spec = operands_for(key);
                    EXPECT_EQ(spec.M, key.M);
                    EXPECT_EQ(spec.N, key.N);
                    EXPECT_EQ(spec.K, key.K);
                    EXPECT_EQ(spec.trans_a, key.trans_a);
                    EXPECT_EQ(spec.trans_b, key.trans_b);
                    const bool packed = alignment == packed_alignment(key);
                    // Tight leading dimensions (0) are the rows' lengths.
                    const int lda = spec.lda ? spec.lda : (ta ? key.M : key.K);
                    const int ldb = spec.ldb ? spec.ldb : (tb ? key.K : key.N);
                    const int ldc = spec.ldc ? spec.ldc : key.N;
                    EXPECT_GE(lda, ta ? key.M : key.K);
                    EXPECT_GE(ldb, tb ? key.K : key.N);
                    EXPECT_GE(ldc, key.N);
                    if (packed) {
                        EXPECT_EQ(spec.lda + spec.ldb + spec.ldc + spec.offset_floats, 0);
                    } else {
                        EXPECT_LT(lda, (ta ? key.M : key.K) + 4);  // at most 3 floats of padding a row
                        EXPECT_LT(ldb, (tb ? key.K : key.N) + 4);
                        EXPECT_LT(ldc, key.N + 4);
                    }
                    // GemmProblem's allocations are 256-byte aligned; its operands start
                    // offset_floats past that.
                    const auto* start = reinterpret_cast<const char*>(256) + 4 * spec.offset_floats;
                    EXPECT_EQ(alignment_class(start, lda, start, ldb, start, ldc), alignment);
                }
    ShapeKey bad;
    bad.M = bad.N = bad.K = 64;
    bad.alignment = 2;
    EXPECT_THROW(operands_for(bad), Error);
}

// The operands' seed is a function of the shape computed in 64 bits: N * 7 in int
// overflowed (undefined) from N = 306,783,379 on.
TEST(Operands, TheSeedOfAWideShapeIsComputedIn64Bits) {
    ShapeKey key;
    key.M = 1, key.N = 400000000, key.K = 1;
    key.alignment = packed_alignment(key);
    EXPECT_EQ(operands_for(key).seed, 0x5eed0000ull + 31 + 7ull * 400000000 + 1);
}

}  // namespace
