// The operands the tuner judges a shape key on (operands_for): of exactly the key's alignment
// class, so that a winner is stored only for calls it was measured on; and the layouts of the
// check's later runs (later_layouts_for), of the same class, which set each operand's
// alignment apart from every other's.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <limits>
#include <set>

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

// For every class of every shape and transpose: each of the check's later layouts keeps the
// class and makes every row 4 to 7 floats longer than it is. Class 16 has one, every operand
// aligned. Below, for each operand X and each other operand Y, some layout (the tuner's or a
// later one) has Y taking 16-byte accesses and X not, where a kernel that takes Y's alignment
// for X's goes wrong; so each operand takes both. There are two later layouts where the
// tuner's has some operand aligned, three where it has none.
TEST(Operands, TheLaterLayoutsKeepTheClassAndSetEveryOperandApartFromEveryOther) {
    const int shapes[][3] = {{1, 4096, 4096}, {8, 4096, 4093}, {32, 4094, 4096}, {4095, 4097, 4093},
                             {7, 17, 1},      {17, 32, 7},     {17, 31, 8},      {2, 6, 10}};
    std::set<int> firsts_seen;
    for_every_key(shapes, [&](const ShapeKey& key) {
        const ProblemSpec first = with_leading_dimensions_filled(operands_for(key));
        const int rows[3] = {key.trans_a ? key.M : key.K, key.trans_b ? key.K : key.N, key.N};
        const int* first_ld[3] = {&first.lda, &first.ldb, &first.ldc};
        const std::vector<LeadingDimensions> later = later_layouts_for(first);
        // Whether each operand takes 16-byte accesses, layout by layout, the tuner's first.
        std::vector<std::array<bool, 3>> aligned(1);
        for (int i = 0; i < 3; ++i) aligned[0][i] = operand_alignment(first.offset_floats, *first_ld[i]) == 16;
        const int in_first = aligned[0][0] + aligned[0][1] + aligned[0][2];
        for (const LeadingDimensions& layout : later) {
            const int ld[3] = {layout.lda, layout.ldb, layout.ldc};
            int alignment[3];
            for (int i = 0; i < 3; ++i) {
                alignment[i] = operand_alignment(0, ld[i]);
                EXPECT_GE(ld[i], rows[i] + 4) << "operand " << i;
                EXPECT_LE(ld[i], rows[i] + 7) << "operand " << i;
            }
            EXPECT_EQ(std::min({alignment[0], alignment[1], alignment[2]}), key.alignment);
            aligned.push_back({alignment[0] == 16, alignment[1] == 16, alignment[2] == 16});
        }
        if (key.alignment == 16) {
            EXPECT_EQ(later.size(), 1u);
            return;
        }
        firsts_seen.insert(aligned[0][0] | aligned[0][1] << 1 | aligned[0][2] << 2);
        EXPECT_EQ(later.size(), in_first == 0 ? 3u : 2u);
        for (int x = 0; x < 3; ++x)
            for (int y = 0; y < 3; ++y) {
                if (x == y) continue;
                EXPECT_TRUE(std::any_of(aligned.begin(), aligned.end(),
                                        [&](const std::array<bool, 3>& a) { return a[y] && !a[x]; }))
                    << "no layout has operand " << y << " aligned and " << x << " not";
            }
    });
    // The shapes gave the tuner's layout with none, one and two operands aligned, C among them.
    for (const int first : {0, 1, 4, 6}) EXPECT_EQ(firsts_seen.count(first), 1u) << "first layout " << first;
    // Leading dimensions left at 0 (tight, before GemmProblem fills them in) are refused.
    ProblemSpec unfilled;
    unfilled.M = 8, unfilled.N = 64, unfilled.K = 64;
    EXPECT_THROW(later_layouts_for(unfilled), Error);
    // A row whose longer layout would pass an int is refused (kLongestCheckedRow, in
    // tuner/longest_tunable_row.h, shorter, keeps such shapes from the tuner), not wrapped to
    // a negative leading dimension.
    constexpr int longest_in_an_int = std::numeric_limits<int>::max() - 7;
    ProblemSpec longest;
    longest.M = longest.N = 1;
    longest.K = longest.lda = longest_in_an_int;
    longest.ldb = longest.ldc = 1;
    EXPECT_EQ(later_layouts_for(longest).front().lda, longest_in_an_int + 5);  // A took 16 bytes: now odd
    longest.K = longest.lda = longest_in_an_int + 1;
    EXPECT_THROW(later_layouts_for(longest), Error);
}

// The check's runs: four in class 16 (two on each layout), one more below for each later
// layout past the first.
TEST(Operands, TheCheckRunsOnceMoreForEachLaterLayoutPastTheFirst) {
    const auto runs = [](int M, int N, int K) {
        ProblemSpec tight;  // leading dimensions of 0
        tight.M = M, tight.N = N, tight.K = K;
        return checked_runs(tight);
    };
    EXPECT_EQ(runs(8, 4096, 4096), 4);
    EXPECT_EQ(runs(17, 32, 7), 5);  // B and C aligned, A not
    EXPECT_EQ(runs(17, 31, 8), 5);  // A aligned
    EXPECT_EQ(runs(17, 31, 7), 6);  // none aligned
    ProblemSpec offset;
    offset.M = offset.N = offset.K = 64;
    offset.offset_floats = 2;  // class 8: none aligned
    EXPECT_EQ(checked_runs(offset), 6);
}

}  // namespace
