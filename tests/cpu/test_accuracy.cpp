// The validation rule, on hand-made matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tuner/accuracy.h"
#include "tuner/random_operands.h"

using namespace sgemm;

namespace {

struct Case {
    int M = 3, N = 5, ld = 6, K = 100;
    std::vector<float> ref, bound, c0;
    Case() : ref(M * ld), bound(M * ld), c0(M * ld, 0.0f) {
        for (int i = 0; i < M * ld; ++i) {
            ref[i] = 0.25f * static_cast<float>(i % 7) - 0.7f;
            bound[i] = 2.0f + static_cast<float>(i % 3);
        }
    }
};

// `out` judged at alpha 1 and beta 0, where the case's matrices are the reference and bound.
Accuracy judge(const std::vector<float>& out, const Case& c) {
    return compare_to_reference(out, Reference{c.ref, c.bound, c.c0}, c.M, c.N, c.ld, c.K);
}

TEST(Accuracy, IdenticalOutputPasses) {
    Case c;
    const Accuracy a = judge(c.ref, c);
    EXPECT_TRUE(a.ok());
    EXPECT_EQ(a.max_abs_err, 0.0);
    EXPECT_EQ(a.verdict(), "ok");
}

TEST(Accuracy, RoundingSizedDifferencesPass) {
    Case c;
    std::vector<float> out = c.ref;
    for (float& x : out) x = std::nextafter(x, 10.0f);  // one ulp everywhere
    EXPECT_TRUE(judge(out, c).ok());
}

// The case's output with the error at each element `scaled` times the tolerance of the bound.
std::vector<float> off_by_a_share_of_the_tolerance(const Case& c, double scaled, bool every_element) {
    std::vector<float> out = c.ref;
    for (int i = 0; i < c.M; ++i)
        for (int j = 0; j < (every_element ? c.N : 1); ++j) {
            const int at = i * c.ld + j;
            out[at] = static_cast<float>(c.ref[at] + scaled * tolerance_for_k(c.K) * c.bound[at]);
            if (!every_element) return out;
        }
    return out;
}

// Errors each under the tolerance, but large at every element, as when every input is
// rounded coarser than fp32: the root mean square fails them, and the verdict says so.
TEST(Accuracy, ErrorsUnderTheMaxButLargeEverywhereFail) {
    Case c;
    const Accuracy a = judge(off_by_a_share_of_the_tolerance(c, 0.5, true), c);
    EXPECT_LE(a.max_scaled_err, a.tolerance);
    EXPECT_GT(a.rms_scaled_err, a.rms_tolerance);
    EXPECT_FALSE(a.ok());
    EXPECT_NE(a.verdict().find("root mean square"), std::string::npos) << a.verdict();
}

// One element near the tolerance among a small output's 15 is judged by the max alone: the
// root mean square's bound is then one element at the tolerance among them, over the 4 u
// floor that a large output has.
TEST(Accuracy, OneElementNearTheToleranceAmongFewPasses) {
    Case c;
    const Accuracy a = judge(off_by_a_share_of_the_tolerance(c, 0.9, false), c);
    EXPECT_GT(a.rms_scaled_err, 4 * unit_roundoff_fp32());
    EXPECT_TRUE(a.ok()) << a.verdict();
    EXPECT_DOUBLE_EQ(a.rms_tolerance, rms_tolerance_for(c.K, static_cast<std::size_t>(c.M) * c.N));
    EXPECT_DOUBLE_EQ(rms_tolerance_for(c.K, 1u << 20), 4 * unit_roundoff_fp32());
}

TEST(Accuracy, OneWrongElementFailsAndIsLocated) {
    Case c;
    std::vector<float> out = c.ref;
    out[2 * c.ld + 4] += 0.01f;
    const Accuracy a = judge(out, c);
    EXPECT_FALSE(a.ok());
    EXPECT_EQ(a.worst_row, 2u);
    EXPECT_EQ(a.worst_col, 4u);
    EXPECT_NE(a.verdict().find("C[2][4]"), std::string::npos) << a.verdict();
}

TEST(Accuracy, NanFailsEvenWhereTheRestIsRight) {
    Case c;
    std::vector<float> out = c.ref;
    out[1 * c.ld + 0] = std::numeric_limits<float>::quiet_NaN();
    const Accuracy a = judge(out, c);
    EXPECT_FALSE(a.ok());
    EXPECT_EQ(a.nonfinite, 1u);
    EXPECT_NE(a.verdict().find("NaN"), std::string::npos);
}

TEST(Accuracy, AReferenceOrBoundThatIsNotFiniteFailsTheCheck) {
    // Every comparison with NaN is false: unchecked, a NaN reference would pass any output.
    for (const bool in_bound : {false, true}) {
        Case c;
        std::vector<float> out = c.ref;
        out[0 * c.ld + 1] = std::numeric_limits<float>::quiet_NaN();  // first, yet the reference is named
        (in_bound ? c.bound : c.ref)[1 * c.ld + 3] = std::numeric_limits<float>::quiet_NaN();
        const Accuracy a = judge(out, c);
        EXPECT_FALSE(a.ok()) << in_bound;
        EXPECT_EQ(a.reference_nonfinite, 1u);
        EXPECT_NE(a.verdict().find("the reference or its bound is NaN or Inf at 1 element, e.g. C[1][3]"),
                  std::string::npos)
            << a.verdict();
    }
}

// A large output is judged in bands of rows on several threads: what it finds must be what
// one pass in row order finds, wherever the elements fall. 2000 x 300 is ten bands or more.
TEST(Accuracy, AnOutputOfManyRowsIsJudgedAsInOnePassInRowOrder) {
    const int M = 2000, N = 300, ld = 301, K = 4096;
    std::vector<float> ref(static_cast<std::size_t>(M) * ld), bound(ref.size(), 1.0f), c0(ref.size(), 0.0f);
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = 0.001f * static_cast<float>(i % 1000) - 0.5f;
    const auto at = [&](int row, int col) { return static_cast<std::size_t>(row) * ld + col; };
    const auto judge_many = [&](const std::vector<float>& out) {
        return compare_to_reference(out, Reference{ref, bound, c0}, M, N, ld, K);
    };
    // The first of two equal largest errors is named, in a band after a smaller one's.
    std::vector<float> out = ref;
    out[at(10, 5)] += 0.25f;
    out[at(500, 7)] += 0.5f;
    out[at(1500, 3)] += 0.5f;
    Accuracy a = judge_many(out);
    EXPECT_EQ(a.worst_row, 500u);
    EXPECT_EQ(a.worst_col, 7u);
    EXPECT_NEAR(a.max_scaled_err, 0.5, 1e-6);
    // A NaN in a late band is named over a larger error in an early one; both are counted.
    out[at(1800, 1)] = std::numeric_limits<float>::quiet_NaN();
    out[at(1990, 2)] = std::numeric_limits<float>::infinity();
    out[at(100, 0)] += 2.0f;
    a = judge_many(out);
    EXPECT_EQ(a.nonfinite, 2u);
    EXPECT_EQ(a.worst_row, 1800u);
    EXPECT_EQ(a.worst_col, 1u);
    EXPECT_NEAR(a.max_scaled_err, 2.0, 1e-6) << "the largest error is still measured";
    // A reference that is not finite is named over an earlier NaN in the output.
    bound[at(1999, 299)] = std::numeric_limits<float>::quiet_NaN();
    a = judge_many(out);
    EXPECT_EQ(a.reference_nonfinite, 1u);
    EXPECT_EQ(a.worst_row, 1999u);
    EXPECT_EQ(a.worst_col, 299u);
    // The sums cover every band: the same error everywhere is its own root mean square, and
    // the output's padding column is never read.
    bound[at(1999, 299)] = 1.0f;
    std::vector<float> even = ref;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) even[at(i, j)] = static_cast<float>(ref[at(i, j)] + 0.125);
    for (int i = 0; i < M; ++i) even[at(i, N)] = std::numeric_limits<float>::quiet_NaN();
    a = judge_many(even);
    EXPECT_EQ(a.nonfinite, 0u);
    EXPECT_NEAR(a.rms_scaled_err, 0.125, 1e-6);
    EXPECT_NEAR(a.rel_err_norm, 0.125 / std::sqrt(0.0834), 0.01);
}

TEST(Accuracy, ARunAtOtherScalarsIsJudgedAgainstAlphaTimesTheProductPlusBetaTimesC0) {
    Case c;
    for (std::size_t i = 0; i < c.c0.size(); ++i) c.c0[i] = 0.5f - 0.125f * static_cast<float>(i % 5);
    const Reference scaled{c.ref, c.bound, c.c0, -1.5, 0.75};
    std::vector<float> out(c.ref.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = -1.5f * c.ref[i] + 0.75f * c.c0[i];
    EXPECT_TRUE(compare_to_reference(out, scaled, c.M, c.N, c.ld, c.K).ok());
    EXPECT_FALSE(compare_to_reference(c.ref, scaled, c.M, c.N, c.ld, c.K).ok()) << "alpha and beta dropped";
    // One ulp off everywhere still passes.
    std::vector<float> near = out;
    for (std::size_t i = 0; i < near.size(); ++i) near[i] = std::nextafter(near[i], 10.0f);
    EXPECT_TRUE(compare_to_reference(near, scaled, c.M, c.N, c.ld, c.K).ok());
}

// The padding is not compared with the reference: GemmProblem's guard check judges it.
TEST(Accuracy, ElementsPastTheRowLengthAreIgnored) {
    Case c;
    std::vector<float> out = c.ref;
    out[0 * c.ld + 5] = std::numeric_limits<float>::quiet_NaN();  // column 5 is padding (N = 5)
    EXPECT_TRUE(judge(out, c).ok());
}

// A write outside C fails a result that is otherwise right, and the verdict names it before
// any wrong element.
TEST(Accuracy, AWriteOutsideCFailsAndIsNamedFirst) {
    Case c;
    Accuracy a = judge(c.ref, c);
    a.outside_writes = 1;
    a.first_outside = "at C[3][0], past C's last row";
    EXPECT_FALSE(a.ok());
    EXPECT_EQ(a.verdict(), "wrote 1 float outside C, the first at C[3][0], past C's last row");

    std::vector<float> out = c.ref;
    out[1 * c.ld + 0] = std::numeric_limits<float>::quiet_NaN();
    a = judge(out, c);
    a.outside_writes = 3;
    a.first_outside = "at C[0][5], in the padding past column 4";
    EXPECT_EQ(a.verdict(), "wrote 3 floats outside C, the first at C[0][5], in the padding past column 4");
}

// So do a write past the workspace a kernel declares and tile counters left non-zero.
TEST(Accuracy, AWritePastTheWorkspaceOrACounterLeftSetFails) {
    Case c;
    Accuracy a = judge(c.ref, c);
    a.workspace_declared = 1048596;
    a.workspace_overrun = 2;
    EXPECT_FALSE(a.ok());
    EXPECT_EQ(a.verdict(), "wrote past the 1048596 bytes of workspace it declares: 2 words of the guard after them changed");
    a.workspace_overrun = 0;
    a.counters_left = 3;
    EXPECT_FALSE(a.ok());
    EXPECT_EQ(a.verdict(), "left 3 tile counters of the workspace non-zero");
    a.counters_left = 0;
    EXPECT_TRUE(a.ok());
}

TEST(Accuracy, ToleranceGrowsWithK) {
    EXPECT_LT(tolerance_for_k(1), tolerance_for_k(64));
    EXPECT_LT(tolerance_for_k(64), tolerance_for_k(4096));
    EXPECT_LT(tolerance_for_k(4096), tolerance_for_k(65536));
    EXPECT_DOUBLE_EQ(tolerance_for_k(0), tolerance_for_k(1));  // an empty sum: no log of 0
}

// One row of A times N columns of B, on the tuner's operands (random_operand: uniform in
// (-1, 1)), summed in double for the reference and the bound, and by `sum` for the output
// under judgement.
struct LongDotProducts {
    static constexpr int N = 64;
    int K;
    std::vector<float> a, b;  // a: K; b: N x K, a column's K values in a row
    std::vector<float> ref, bound, c0;

    explicit LongDotProducts(int k) : K(k), a(k), b(static_cast<std::size_t>(N) * k), ref(N), bound(N), c0(N, 0.0f) {
        for (int i = 0; i < K; ++i) a[i] = random_operand(0x5eed, i);
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = random_operand(0xbeef, i);
        for (int j = 0; j < N; ++j) {
            double exact = 0, magnitude = 0;
            for (int i = 0; i < K; ++i) {
                exact += static_cast<double>(a[i]) * column(j)[i];
                magnitude += std::fabs(static_cast<double>(a[i]) * column(j)[i]);
            }
            ref[j] = static_cast<float>(exact);
            bound[j] = static_cast<float>(magnitude);
        }
    }
    const float* column(int j) const { return b.data() + static_cast<std::size_t>(j) * K; }

    // The output of a kernel whose column j is sum(j), judged at alpha 1 and beta 0.
    template <typename Sum>
    Accuracy judge(Sum sum) const {
        std::vector<float> out(N);
        for (int j = 0; j < N; ++j) out[j] = sum(column(j));
        return compare_to_reference(out, Reference{ref, bound, c0}, 1, N, N, K);
    }
    // fp32 sums over k = first, first + step, ...: one split-K slice.
    float slice(const float* bj, int first, int step, float (*round)(float) = [](float x) { return x; }) const {
        float s = 0;
        for (int i = first; i < K; i += step) s = std::fma(round(a[i]), round(bj[i]), s);
        return s;
    }
};

// What correct kernels do passes at large K: fp32 sums in order, and split into 16 slices
// added at the end, each far under the tolerance.
TEST(Accuracy, Fp32SumsInAnyOrderPassAtLargeK) {
    for (const int K : {14336, 65536}) {
        SCOPED_TRACE(K);
        const LongDotProducts p(K);
        const Accuracy in_order = p.judge([&](const float* bj) { return p.slice(bj, 0, 1); });
        const Accuracy split = p.judge([&](const float* bj) {
            float s = 0;
            for (int part = 0; part < 16; ++part) s += p.slice(bj, part, 16);
            return s;
        });
        EXPECT_TRUE(in_order.ok()) << in_order.verdict();
        EXPECT_TRUE(split.ok()) << split.verdict();
        EXPECT_LT(in_order.max_scaled_err, in_order.tolerance / 4);
        EXPECT_LT(split.max_scaled_err, split.tolerance / 4);
        EXPECT_LT(in_order.rms_scaled_err, 4 * unit_roundoff_fp32() / 4);
        EXPECT_LT(split.rms_scaled_err, 4 * unit_roundoff_fp32() / 4);
    }
}

// Faults a looser tolerance (u (4 sqrt(K) + 16)) passed at large K: inputs rounded to TF32
// (10 bits of mantissa, as tensor cores read them), 117 u here at K = 14336 against 60 u, and
// one product never added, 1012 u at K = 65536 against 64 u. TF32's error falls as 1 /
// sqrt(K) of the bound: at K = 65536 its largest is 49 u on these 64 elements, under the
// tolerance, and its root mean square, about 24 u against 8 u, fails it.
TEST(Accuracy, Tf32InputsAndADroppedProductFailAtLargeK) {
    const auto tf32 = [](float x) {
        std::uint32_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        bits = (bits + 0x1000u) & ~0x1fffu;  // to nearest at bit 13
        std::memcpy(&x, &bits, sizeof bits);
        return x;
    };
    for (const int K : {4096, 14336, 65536}) {
        SCOPED_TRACE(K);
        const LongDotProducts p(K);
        const Accuracy rounded = p.judge([&](const float* bj) { return p.slice(bj, 0, 1, tf32); });
        EXPECT_FALSE(rounded.ok()) << "TF32 inputs: " << rounded.verdict();
        EXPECT_GT(rounded.rms_scaled_err, rounded.rms_tolerance);
    }
    for (const int K : {14336, 65536}) {
        SCOPED_TRACE(K);
        const LongDotProducts p(K);
        // The product with the largest |a|: the one whose loss a kernel's test must see.
        int dropped = 0;
        for (int i = 0; i < K; ++i)
            if (std::fabs(p.a[i]) > std::fabs(p.a[dropped])) dropped = i;
        const Accuracy short_sum = p.judge([&](const float* bj) {
            return p.slice(bj, 0, 1) - p.a[dropped] * bj[dropped];  // as if k = dropped were skipped
        });
        EXPECT_FALSE(short_sum.ok()) << "k = " << dropped << " left out: " << short_sum.verdict();
    }
}

}  // namespace
