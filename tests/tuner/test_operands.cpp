// The operands the tuner judges a shape key on (operands_for): of exactly the key's alignment
// class, so that a winner is stored only for calls it was measured on; and the layout of the
// check's later runs (other_layout_for), of the same class with each operand's alignment
// turned over where the class allows.
#include <gtest/gtest.h>

#include "tuner/candidate_check.h"
#include "tuner/shapes_csv.h"
#include "tuner/tuner.h"

using namespace sgemm;

namespace {

// Calls `judge` with every key of `shapes` (M, N, K) in every transpose and alignment class,
// the key's text traced.
template <std::size_t Count, typename Judge>
void for_every_key(const int (&shapes)[Count][3], Judge judge) {
    for (const auto& mnk : shapes)
        for (int ta = 0; ta < 2; ++ta)
            for (int tb = 0; tb < 2; ++tb)
                for (int alignment : {16, 8, 4}) {
                    ShapeKey key;
                    key.M = mnk[0], key.N = mnk[1], key.K = mnk[2];
                    key.trans_a = ta, key.trans_b = tb, key.alignment = alignment;
                    SCOPED_TRACE(key.to_string());
                    judge(key);
                }
}

// Each key is judged on operands of exactly its class: tight where packed operands have it,
// else padded rows and, below 16, operands that start the class's bytes past 16.
TEST(Operands, EachKeyGetsOperandsOfItsAlignmentClass) {
    const int shapes[][3] = {{1, 4096, 4096}, {8, 4096, 4093}, {32, 4094, 4096}, {4095, 4097, 4093}, {7, 17, 1}};
    for_every_key(shapes, [&](const ShapeKey& key) {
        const ProblemSpec spec = operands_for(key);
        EXPECT_EQ(spec.M, key.M);
        EXPECT_EQ(spec.N, key.N);
        EXPECT_EQ(spec.K, key.K);
        EXPECT_EQ(spec.trans_a, key.trans_a);
        EXPECT_EQ(spec.trans_b, key.trans_b);
        const bool packed = key.alignment == packed_alignment(key);
        // Tight leading dimensions (0) are the rows' lengths.
        const int lda = spec.lda ? spec.lda : (key.trans_a ? key.M : key.K);
        const int ldb = spec.ldb ? spec.ldb : (key.trans_b ? key.K : key.N);
        const int ldc = spec.ldc ? spec.ldc : key.N;
        EXPECT_GE(lda, key.trans_a ? key.M : key.K);
        EXPECT_GE(ldb, key.trans_b ? key.K : key.N);
        EXPECT_GE(ldc, key.N);
        if (packed) {
            EXPECT_EQ(spec.lda + spec.ldb + spec.ldc + spec.offset_floats, 0);
        } else {
            EXPECT_LT(lda, (key.trans_a ? key.M : key.K) + 4);  // at most 3 floats of padding a row
            EXPECT_LT(ldb, (key.trans_b ? key.K : key.N) + 4);
            EXPECT_LT(ldc, key.N + 4);
        }
        // GemmProblem's allocations are 256-byte aligned; its operands start offset_floats past that.
        const auto* start = reinterpret_cast<const char*>(256) + 4 * spec.offset_floats;
        EXPECT_EQ(alignment_class(start, lda, start, ldb, start, ldc), key.alignment);
    });
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

// The alignment in bytes (16, 8 or 4) of an operand that starts `offset_floats` past 256
// bytes with rows `ld` apart.
int operand_alignment(int offset_floats, int ld) {
    const int bytes = 4 * offset_floats | 4 * ld;
    return bytes % 16 == 0 ? 16 : bytes % 8 == 0 ? 8 : 4;
}

// For every class of every shape and transpose: the check's later layout keeps the class,
// makes every row 4 to 7 floats longer than it is, and turns each operand's 16-byte
// alignment over, but for C where no operand took 16-byte accesses in the first layout (one
// must stay below 16 bytes). Class 16 turns nothing.
TEST(Operands, TheOtherLayoutKeepsTheClassAndTurnsEachOperandsAlignmentOver) {
    const int shapes[][3] = {{1, 4096, 4096}, {8, 4096, 4093}, {32, 4094, 4096}, {4095, 4097, 4093},
                             {7, 17, 1},      {17, 32, 7},     {17, 31, 8},      {2, 6, 10}};
    int turned = 0, kept_for_c = 0;
    for_every_key(shapes, [&](const ShapeKey& key) {
        ProblemSpec first = operands_for(key);
        const int rows[3] = {key.trans_a ? key.M : key.K, key.trans_b ? key.K : key.N, key.N};
        int* first_ld[3] = {&first.lda, &first.ldb, &first.ldc};
        for (int i = 0; i < 3; ++i)
            if (*first_ld[i] == 0) *first_ld[i] = rows[i];  // tight, as GemmProblem fills it in
        const LeadingDimensions other = other_layout_for(first);
        const int other_ld[3] = {other.lda, other.ldb, other.ldc};
        int before[3], after[3];
        for (int i = 0; i < 3; ++i) {
            before[i] = operand_alignment(first.offset_floats, *first_ld[i]);
            after[i] = operand_alignment(0, other_ld[i]);
            EXPECT_GE(other_ld[i], rows[i] + 4) << "operand " << i;
            EXPECT_LE(other_ld[i], rows[i] + 7) << "operand " << i;
        }
        EXPECT_EQ(std::min({after[0], after[1], after[2]}), key.alignment);
        const bool none_took_16 = before[0] < 16 && before[1] < 16 && before[2] < 16;
        for (int i = 0; i < 3; ++i) {
            const bool stays_for_c = i == 2 && none_took_16;
            if (key.alignment == 16) {
                EXPECT_EQ(after[i], 16) << "operand " << i;
            } else if (stays_for_c) {
                EXPECT_EQ(after[i], key.alignment);
                ++kept_for_c;
            } else {
                EXPECT_NE(after[i] == 16, before[i] == 16) << "operand " << i;
                ++turned;
            }
        }
    });
    // Both rules below class 16 were met on these shapes.
    EXPECT_GT(turned, 0);
    EXPECT_GT(kept_for_c, 0);
    // Leading dimensions left at 0 (tight, before GemmProblem fills them in) are refused.
    ProblemSpec unfilled;
    unfilled.M = 8, unfilled.N = 64, unfilled.K = 64;
    EXPECT_THROW(other_layout_for(unfilled), Error);
    // A row whose longer layout would pass an int is refused (shapes_csv's kLongestCheckedRow
    // keeps such shapes from the tuner), not wrapped to a negative leading dimension.
    ProblemSpec longest;
    longest.M = longest.N = 1;
    longest.K = longest.lda = kLongestCheckedRow;
    longest.ldb = longest.ldc = 1;
    EXPECT_EQ(other_layout_for(longest).lda, kLongestCheckedRow + 5);  // A took 16 bytes: now odd
    longest.K = longest.lda = kLongestCheckedRow + 1;
    EXPECT_THROW(other_layout_for(longest), Error);
}

}  // namespace
