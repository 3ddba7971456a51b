#include <gtest/gtest.h>

#include <unordered_set>

#include "db/shape_key.h"
#include "src/util/error.h"

using namespace sgemm;

namespace {
const char* at(std::uintptr_t address) { return reinterpret_cast<const char*>(address); }
}  // namespace

TEST(AlignmentClass, IsTheLargestOf16_8_4ThatEveryPointerAndLeadingDimensionAllows) {
    EXPECT_EQ(alignment_class(at(0x1000), 64, at(0x2000), 128, at(0x3000), 4), 16);
    // lda = 6 floats = 24 bytes: 8-byte aligned only.
    EXPECT_EQ(alignment_class(at(0x1000), 6, at(0x2000), 128, at(0x3000), 4), 8);
    // B offset by one float.
    EXPECT_EQ(alignment_class(at(0x1000), 64, at(0x2004), 128, at(0x3000), 4), 4);
    // ldb of 6 floats (24 bytes), then of 7 (28).
    EXPECT_EQ(alignment_class(at(0x1000), 64, at(0x2000), 6, at(0x3000), 4), 8);
    EXPECT_EQ(alignment_class(at(0x1000), 64, at(0x2000), 7, at(0x3000), 4), 4);
    // C offset by two floats, ldc odd.
    EXPECT_EQ(alignment_class(at(0x1000), 64, at(0x2000), 128, at(0x3008), 4), 8);
    EXPECT_EQ(alignment_class(at(0x1000), 64, at(0x2000), 128, at(0x3000), 7), 4);
    // Not even float-aligned: no kernel may run it.
    EXPECT_EQ(alignment_class(at(0x1002), 64, at(0x2000), 128, at(0x3000), 4), 0);
}

// A key of K = 0 computes no product: C's rows alone set its class, as dispatch aligns such a
// call (tests/dispatch/test_gemm_call.cpp checks the two agree).
TEST(ShapeKey, PackedAlignmentOfKZeroIsThatOfCAlone) {
    ShapeKey k;
    k.M = 6, k.N = 8, k.K = 1;
    k.trans_a = true;  // A's rows are M = 6 floats long: 24 bytes
    EXPECT_EQ(packed_alignment(k), 8);
    k.K = 0;
    EXPECT_EQ(packed_alignment(k), 16);
    k.N = 6;
    EXPECT_EQ(packed_alignment(k), 8);
    k.N = 7;
    EXPECT_EQ(packed_alignment(k), 4);
}

TEST(ShapeKey, TextFormNamesEveryField) {
    ShapeKey k;
    k.M = 8, k.N = 4096, k.K = 14336;
    k.trans_b = true;
    k.precision = GemmPrecision::tf32;
    k.alignment = 8;
    EXPECT_EQ(k.to_string(), "M=8 N=4096 K=14336 NT tf32 align8");
}

TEST(ShapeKey, HashAndEqualitySeeEveryField) {
    ShapeKey base;
    base.M = 8, base.N = 4096, base.K = 4096;
    std::vector<ShapeKey> keys(8, base);
    keys[1].M = 9;
    keys[2].N = 4097;
    keys[3].K = 4095;
    keys[4].trans_a = true;
    keys[5].trans_b = true;
    keys[6].precision = GemmPrecision::tf32;
    keys[7].alignment = 4;
    std::unordered_set<ShapeKey> set(keys.begin(), keys.end());
    EXPECT_EQ(set.size(), keys.size());
    std::unordered_set<std::size_t> hashes;
    for (const ShapeKey& k : keys) hashes.insert(std::hash<ShapeKey>()(k));
    EXPECT_EQ(hashes.size(), keys.size());
    for (std::size_t i = 1; i < keys.size(); ++i) EXPECT_NE(keys[0], keys[i]) << i;
    EXPECT_EQ(set.count(base), 1u);
}

TEST(ShapeKey, ParsesTransposesAndPrecision) {
    ShapeKey k;
    parse_transposes("tn", k);
    EXPECT_TRUE(k.trans_a);
    EXPECT_FALSE(k.trans_b);
    EXPECT_EQ(k.transposes(), "TN");
    EXPECT_THROW(parse_transposes("NX", k), Error);
    EXPECT_THROW(parse_transposes("N", k), Error);
    parse_transposes(" NT ", k);  // as a list item or a CSV field is read
    EXPECT_FALSE(k.trans_a);
    EXPECT_TRUE(k.trans_b);
    EXPECT_THROW(parse_transposes("N T", k), Error);
    EXPECT_EQ(parse_gemm_precision("tf32"), GemmPrecision::tf32);
    EXPECT_EQ(parse_gemm_precision(" FP32"), GemmPrecision::fp32);
    EXPECT_THROW(parse_gemm_precision("fp16"), Error);
}
