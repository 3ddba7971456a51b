// The argument check that runs before any device work: every bad argument is refused with
// its own status and a reason, and a good call gets its shape key.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "src/dispatch/gemm_call.h"
#include "src/dispatch/last_error.h"

using namespace sgemm;

namespace {

// Never dereferenced: only the addresses' alignment matters to the check.
const float* at(std::uintptr_t address) { return reinterpret_cast<const float*>(address); }

// A good NN call: 8 x 4096 x 1024, tight leading dimensions, 256-byte aligned pointers.
GemmCall good() {
    GemmCall c;
    c.M = 8, c.N = 4096, c.K = 1024;
    c.A = at(0x10000), c.lda = 1024;
    c.B = at(0x20000), c.ldb = 4096;
    c.C = const_cast<float*>(at(0x30000)), c.ldc = 4096;
    return c;
}

sgemm_dispatch_status_t check(const GemmCall& c, ShapeKey* key = nullptr) {
    ShapeKey k;
    const sgemm_dispatch_status_t s = check_call(c, GemmPrecision::fp32, k);
    if (key) *key = k;
    return s;
}

bool reason_has(const std::string& text) { return std::string(last_error()).find(text) != std::string::npos; }

}  // namespace

TEST(GemmCall, AGoodCallGetsItsShapeKey) {
    ShapeKey key;
    ASSERT_EQ(check(good(), &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(key.M, 8);
    EXPECT_EQ(key.N, 4096);
    EXPECT_EQ(key.K, 1024);
    EXPECT_FALSE(key.trans_a);
    EXPECT_FALSE(key.trans_b);
    EXPECT_EQ(key.alignment, 16);
    EXPECT_EQ(key.precision, GemmPrecision::fp32);
    ShapeKey tf32;
    ASSERT_EQ(check_call(good(), GemmPrecision::tf32, tf32), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(tf32.precision, GemmPrecision::tf32);
    // TN: A stored K x M; NT: B stored N x K.
    GemmCall tn = good();
    tn.trans_a = SGEMM_DISPATCH_OP_T, tn.lda = 8;
    ASSERT_EQ(check(tn, &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_TRUE(key.trans_a);
    EXPECT_FALSE(key.trans_b);
    GemmCall nt = good();
    nt.trans_b = SGEMM_DISPATCH_OP_T, nt.ldb = 1024;
    ASSERT_EQ(check(nt, &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_FALSE(key.trans_a);
    EXPECT_TRUE(key.trans_b);
}

TEST(GemmCall, OpsOtherThanNOrTAreRefused) {
    GemmCall c = good();
    c.trans_b = static_cast<sgemm_dispatch_op_t>(2);
    EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_VALUE);
    EXPECT_TRUE(reason_has("trans_b=2")) << last_error();
}

TEST(GemmCall, NegativeDimensionsAreRefused) {
    for (int which = 0; which < 3; ++which) {
        GemmCall c = good();
        (which == 0 ? c.M : which == 1 ? c.N : c.K) = -1;
        EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_SIZE) << which;
        EXPECT_TRUE(reason_has("none may be negative")) << last_error();
    }
}

TEST(GemmCall, AnEmptyProductSucceedsWithoutLookingAtItsPointers) {
    // As in cuBLAS: M or N of 0 computes nothing, so NULL or misaligned pointers and K = 0
    // pass, and the key says it is empty.
    for (int which = 0; which < 2; ++which) {
        GemmCall c = good();
        (which == 0 ? c.M : c.N) = 0;
        c.A = nullptr, c.B = at(0x20002), c.C = nullptr;
        ShapeKey key;
        EXPECT_EQ(check(c, &key), SGEMM_DISPATCH_SUCCESS) << which;
        EXPECT_TRUE(empty_product(key)) << which;
        c.K = 0, c.lda = 1;
        EXPECT_EQ(check(c, &key), SGEMM_DISPATCH_SUCCESS) << which;
    }
    ShapeKey key;
    ASSERT_EQ(check(good(), &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_FALSE(empty_product(key));
}

TEST(GemmCall, AnEmptyProductsLeadingDimensionsAreStillChecked) {
    // cuBLAS refuses these (seen on the H200, cuBLAS 13.0), and so does BLAS: a wrong leading
    // dimension is a bug in the caller even when this call reads nothing.
    GemmCall c = good();
    c.M = 0;
    c.lda = 1023;  // rows of K = 1024, though there are no rows
    EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
    EXPECT_TRUE(reason_has("lda=1023 is less than K=1024")) << last_error();
    c = good();
    c.N = 0;
    c.ldb = 0, c.ldc = 0;  // rows of N = 0: still at least 1
    EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
    EXPECT_TRUE(reason_has("each must be at least 1")) << last_error();
    c.ldb = 1, c.ldc = 1;
    EXPECT_EQ(check(c), SGEMM_DISPATCH_SUCCESS) << last_error();
}

TEST(GemmCall, ACallOfKOrAlphaZeroIsCheckedForCAlone) {
    // As in BLAS, no product is computed: A and B are not read, so they may be NULL or
    // misaligned, and the key's alignment class is C's.
    for (const bool k_zero : {true, false}) {
        SCOPED_TRACE(k_zero ? "K = 0" : "alpha = 0");
        GemmCall c = good();
        if (k_zero) c.K = 0, c.lda = 1;
        else c.alpha = -0.0f;
        EXPECT_TRUE(scales_c_alone(c));
        c.A = nullptr, c.B = at(0x20002);
        c.C = const_cast<float*>(at(0x30008)), c.ldc = 4098;
        ShapeKey key;
        ASSERT_EQ(check(c, &key), SGEMM_DISPATCH_SUCCESS) << last_error();
        EXPECT_FALSE(empty_product(key));
        EXPECT_EQ(key.K, c.K);
        EXPECT_EQ(key.alignment, 8);
        c.C = nullptr;
        EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_VALUE);
        EXPECT_TRUE(reason_has("C is NULL")) << last_error();
        c.C = const_cast<float*>(at(0x30002));
        EXPECT_EQ(check(c), SGEMM_DISPATCH_MISALIGNED);
        EXPECT_TRUE(reason_has("C=0x30002 must be 4-byte aligned")) << last_error();
    }
    // Any other alpha, NaN included, computes the product, which reads A and B.
    GemmCall c = good();
    c.alpha = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(scales_c_alone(c));
    c.A = nullptr;
    EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_VALUE);
    EXPECT_TRUE(reason_has("A is NULL")) << last_error();
}

TEST(GemmCall, NullPointersAreRefusedByName) {
    for (const char* name : {"A", "B", "C"}) {
        GemmCall c = good();
        if (name[0] == 'A') c.A = nullptr;
        if (name[0] == 'B') c.B = nullptr;
        if (name[0] == 'C') c.C = nullptr;
        EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_VALUE) << name;
        EXPECT_TRUE(reason_has(std::string(name) + " is NULL")) << last_error();
    }
}

TEST(GemmCall, LeadingDimensionsFollowTheStoredLayout) {
    GemmCall c = good();
    c.lda = 1023;  // A is M x K: rows of K
    EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
    EXPECT_TRUE(reason_has("lda=1023 is less than K=1024")) << last_error();

    c = good();
    c.trans_a = SGEMM_DISPATCH_OP_T;  // A is K x M: rows of M, so lda = 8 is enough
    c.lda = 8;
    EXPECT_EQ(check(c), SGEMM_DISPATCH_SUCCESS) << last_error();
    c.lda = 7;
    EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
    EXPECT_TRUE(reason_has("transposed")) << last_error();

    c = good();
    c.ldb = 4095;  // B is K x N: rows of N
    EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
    c.trans_b = SGEMM_DISPATCH_OP_T;  // B is N x K: rows of K
    c.ldb = 1024;
    EXPECT_EQ(check(c), SGEMM_DISPATCH_SUCCESS) << last_error();
    c.ldb = 1000;
    EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);

    c = good();
    c.ldc = 4000;
    EXPECT_EQ(check(c), SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
    EXPECT_TRUE(reason_has("ldc=4000 is less than N=4096")) << last_error();
}

TEST(GemmCall, AlignmentClassComesFromPointersAndLeadingDimensions) {
    ShapeKey key;
    GemmCall c = good();
    c.B = at(0x20008);
    ASSERT_EQ(check(c, &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(key.alignment, 8);
    c = good();
    c.ldb = 4097;  // B's rows too
    ASSERT_EQ(check(c, &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(key.alignment, 4);
    c = good();
    c.ldc = 4097;  // 4097 * 4 bytes: only 4-byte aligned rows
    ASSERT_EQ(check(c, &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(key.alignment, 4);
    c = good();
    c.A = at(0x10002);  // not even float-aligned: no kernel may read it
    EXPECT_EQ(check(c), SGEMM_DISPATCH_MISALIGNED);
    EXPECT_TRUE(reason_has("4-byte aligned")) << last_error();
}

TEST(GemmCall, OnlyAKeyWithoutAProductHasALaunchWithoutOne) {
    ShapeKey key;
    ASSERT_EQ(check(good(), &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(launch_without_product(key), "");
    GemmCall c = good();
    c.N = 0;
    ASSERT_EQ(check(c, &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(launch_without_product(key).rfind("nothing: M or N is 0", 0), 0u) << launch_without_product(key);
    // Its key holds only its sizes, and explain prints only them.
    EXPECT_EQ(explained_shape(key), "M=8 N=0 K=1024");
    c = good();
    c.K = 0, c.lda = 1;
    ASSERT_EQ(check(c, &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(launch_without_product(key).rfind("C = beta * C alone, as in BLAS: K is 0", 0), 0u)
        << launch_without_product(key);
    EXPECT_EQ(explained_shape(key), key.to_string());
}

// sgemm-db explain M N K takes the key of tightly packed matrices (packed_alignment): for
// K = 0 that must be the key dispatch gives such a call, aligned as C alone.
TEST(GemmCall, APackedCallOfKZeroHasTheKeySgemmDbExplains) {
    GemmCall c = good();
    c.trans_a = SGEMM_DISPATCH_OP_T;
    c.M = 6, c.N = 8, c.K = 0;
    c.lda = 6, c.ldb = 8, c.ldc = 8;  // A is K x M when transposed: rows of M = 6 floats
    ShapeKey key;
    ASSERT_EQ(check(c, &key), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(key.alignment, 16);  // C's rows of 32 bytes; A's of 24 would make it 8
    EXPECT_EQ(packed_alignment(key), key.alignment);
}
