// The selection rule (exact, nearest, fallback), on a hand-built database.
#include <gtest/gtest.h>

#include <algorithm>

#include "db/selection.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using namespace sgemm::testing;

namespace {

// Winners for M = 1, 8, 32, 128 at N = K = 4096 (NN fp32 align16), one TN winner, one at
// 8-byte alignment, and a decoy on another device that is faster everywhere.
class Selection_ : public ::testing::Test {
protected:
    void SetUp() override {
        store_ = std::make_unique<TuningStore>(dir_.file("t.db"));
        const Binary b = naive_binary();
        store_->put_binary(b);
        id_ = store_->add_device(h200());
        for (int M : {1, 8, 32, 128}) store_->put_winner(winner(id_, shape(M, 4096, 4096), 0.01 * M, &b));
        ShapeKey tn = shape(8, 4096, 4096);
        tn.trans_a = true;
        store_->put_winner(winner(id_, tn, 0.5, nullptr));
        ShapeKey a8 = shape(8, 4096, 4096);
        a8.alignment = 8;
        store_->put_winner(winner(id_, a8, 0.5, &b));
        const std::string other = store_->add_device(h200(1));
        store_->put_winner(winner(other, shape(2, 4096, 4096), 1e-6, &b));
        winners_ = store_->winners(id_);
    }
    TempDir dir_;
    std::unique_ptr<TuningStore> store_;
    std::string id_;
    std::vector<Winner> winners_;
};

}  // namespace

TEST_F(Selection_, AnExactWinnerIsTakenAsIs) {
    const Selection s = select_kernel(winners_, shape(32, 4096, 4096));
    ASSERT_EQ(s.kind, SelectionKind::Exact);
    EXPECT_EQ(s.winner->shape, shape(32, 4096, 4096));
    EXPECT_NE(s.reason.find("exact winner"), std::string::npos) << s.reason;
}

TEST_F(Selection_, TheNearestInLogMComesFirst) {
    // log2 4 = 2: M=8 is 1 away, M=1 is 2 away.
    Selection s = select_kernel(winners_, shape(4, 4096, 4096));
    ASSERT_EQ(s.kind, SelectionKind::Nearest);
    EXPECT_EQ(s.winner->shape.M, 8);
    // M=16 is as near to 8 as to 32 in log space: the tie goes to the smaller.
    s = select_kernel(winners_, shape(16, 4096, 4096));
    EXPECT_EQ(s.winner->shape.M, 8);
    // M decides before N and K: M=100 takes M=128 over a winner of its very N and K at M=8.
    const Binary b = naive_binary();
    store_->put_winner(winner(id_, shape(8, 1024, 14336), 0.1, &b));
    winners_ = store_->winners(id_);
    s = select_kernel(winners_, shape(100, 1024, 14336));
    ASSERT_EQ(s.kind, SelectionKind::Nearest);
    EXPECT_EQ(s.winner->shape, shape(128, 4096, 4096));
    EXPECT_NE(s.reason.find("nearest tuned shape with NN fp32 align16 is M=128"), std::string::npos) << s.reason;
}

TEST_F(Selection_, NAndKBreakTiesInM) {
    const Binary b = naive_binary();
    store_->put_winner(winner(id_, shape(8, 1024, 1024), 0.1, &b));
    winners_ = store_->winners(id_);
    EXPECT_EQ(select_kernel(winners_, shape(8, 1000, 1000)).winner->shape, shape(8, 1024, 1024));
    EXPECT_EQ(select_kernel(winners_, shape(8, 3000, 5000)).winner->shape, shape(8, 4096, 4096));
    // Two winners of the same M and N: K decides.
    store_->put_winner(winner(id_, shape(8, 1024, 4096), 0.1, &b));
    winners_ = store_->winners(id_);
    EXPECT_EQ(select_kernel(winners_, shape(8, 1024, 3000)).winner->shape, shape(8, 1024, 4096));
    EXPECT_EQ(select_kernel(winners_, shape(8, 1024, 1500)).winner->shape, shape(8, 1024, 1024));
}

TEST_F(Selection_, TransposesPrecisionAndAlignmentMustMatch) {
    ShapeKey tn = shape(4, 4096, 4096);
    tn.trans_a = true;
    EXPECT_TRUE(select_kernel(winners_, tn).winner->kernel.is_cublas()) << "the TN winner, the only TN one";
    ShapeKey a4 = shape(8, 4096, 4096);
    a4.alignment = 4;
    const Selection s = select_kernel(winners_, a4);
    EXPECT_EQ(s.kind, SelectionKind::Fallback) << "no winner at 4-byte alignment";
    EXPECT_NE(s.reason.find("none of the device's 6 winners has NN fp32 align4"), std::string::npos) << s.reason;
    ShapeKey tf32 = shape(8, 4096, 4096);
    tf32.precision = GemmPrecision::tf32;
    EXPECT_EQ(select_kernel(winners_, tf32).kind, SelectionKind::Fallback);
    // Callers pass the device's winners of the call's precision that are in use (dispatch
    // leaves out what it cannot run): none, for tf32, is said so (not "none of the device's 0
    // winners").
    const Selection none = select_kernel({}, tf32);
    EXPECT_EQ(none.kind, SelectionKind::Fallback);
    EXPECT_EQ(none.reason, "no winner for this shape: the device has no tf32 winners in use");
}

TEST_F(Selection_, AKernelThatCannotRunTheShapeIsPassedOver) {
    const CannotRun too_small_m = [](const Winner& w, const ShapeKey&) {
        return w.shape.M < 32 ? std::string("grid too large") : std::string();
    };
    // M=16: M=8 and M=32 are both a factor of 2 away; M=8, the smaller, comes first.
    Selection s = select_kernel(winners_, shape(16, 4096, 4096), too_small_m);
    ASSERT_EQ(s.kind, SelectionKind::Nearest);
    EXPECT_EQ(s.winner->shape.M, 32);
    EXPECT_NE(s.reason.find("passed over M=8 N=4096 K=4096 NN fp32 align16"), std::string::npos) << s.reason;
    s = select_kernel(winners_, shape(4, 4096, 4096), [](const Winner&, const ShapeKey&) { return std::string("no"); });
    EXPECT_EQ(s.kind, SelectionKind::Fallback);
    EXPECT_EQ(s.winner, nullptr);
}

// A winner more than a factor of 2 away in M is no candidate: a skinny kernel tuned for one
// batch can run another far slower than cuBLAS. The fallback serves, and says why.
TEST_F(Selection_, TheNearestReachesAFactorOf2InM) {
    EXPECT_EQ(select_kernel(winners_, shape(64, 4096, 4096)).winner->shape.M, 32);
    EXPECT_EQ(select_kernel(winners_, shape(256, 4096, 4096)).winner->shape.M, 128);
    const Selection s = select_kernel(winners_, shape(257, 4096, 4096));
    EXPECT_EQ(s.kind, SelectionKind::Fallback);
    EXPECT_EQ(s.winner, nullptr);
    EXPECT_NE(s.reason.find("no winner with NN fp32 align16 within a factor of 2 in M: the nearest tuned M is 128, "
                            "and M is 257"),
              std::string::npos)
        << s.reason;
    // A passed-over winner within reach does not open the way to one beyond it.
    const CannotRun none_below_128 = [](const Winner& w, const ShapeKey&) {
        return w.shape.M < 128 ? std::string("no") : std::string();
    };
    const Selection passed = select_kernel(winners_, shape(40, 4096, 4096), none_below_128);
    EXPECT_EQ(passed.kind, SelectionKind::Fallback);
    EXPECT_NE(passed.reason.find("passed over M=32"), std::string::npos) << passed.reason;
    EXPECT_NE(passed.reason.find("the nearest tuned M beyond those is 128, more than a factor of 2 from 40"),
              std::string::npos)
        << passed.reason;
}

// largest_m_served is the rule's own reach at a winner's N and K: every M from the winner's
// up to it selects the winner, and the next M does not. Where two tuned Ms are not a factor
// of 4 apart, the boundary is their geometric mean, rounded down.
TEST_F(Selection_, AWinnerServesItsOwnNAndKUpToLargestMServed) {
    std::vector<Winner> winners = winners_;
    winners.push_back(winner(id_, shape(20, 4096, 4096), 0.2, nullptr));
    const auto served = [&](int M) {
        for (const Winner& w : winners)
            if (w.shape == shape(M, 4096, 4096)) return largest_m_served(winners, w);
        throw Error("no winner at M=" + std::to_string(M));
    };
    EXPECT_EQ(served(1), 2);     // twice its M: 8 is 3 away in log2 M
    EXPECT_EQ(served(8), 12);    // sqrt(8 * 20) = 12.6
    EXPECT_EQ(served(20), 25);   // sqrt(20 * 32) = 25.3
    EXPECT_EQ(served(32), 64);   // sqrt(32 * 128) = 64, a tie the smaller M takes
    EXPECT_EQ(served(128), 256); // twice its M: no larger tuned M
    for (const Winner& w : winners) {
        const int largest = largest_m_served(winners, w);
        for (int M = w.shape.M; M <= largest; ++M) {
            ShapeKey call = w.shape;
            call.M = M;
            EXPECT_EQ(select_kernel(winners, call).winner, &w) << w.shape.to_string() << " at M=" << M;
        }
        ShapeKey past = w.shape;
        past.M = largest + 1;
        EXPECT_NE(select_kernel(winners, past).winner, &w) << w.shape.to_string() << " at M=" << past.M;
    }
}

// The rule's comparisons are exact: twice a tuned M is within reach, and a tie in M goes to
// the smaller shape. (In doubles, M=20 was out of M=10's reach, and of M=16 and M=25 the
// larger came out nearer to M=20.) largest_m_served agrees with the rule for every pair of
// tuned Ms up to 64 and 160.
TEST(Selection, DistancesAreComparedExactly) {
    const std::string id = h200().id();
    std::vector<Winner> winners = {winner(id, shape(10, 4096, 4096), 0.1, nullptr)};
    ASSERT_EQ(select_kernel(winners, shape(20, 4096, 4096)).kind, SelectionKind::Nearest);
    EXPECT_EQ(select_kernel(winners, shape(21, 4096, 4096)).kind, SelectionKind::Fallback);
    EXPECT_EQ(largest_m_served(winners, winners[0]), 20);
    winners = {winner(id, shape(16, 4096, 4096), 0.1, nullptr), winner(id, shape(25, 4096, 4096), 0.1, nullptr)};
    EXPECT_EQ(select_kernel(winners, shape(20, 4096, 4096)).winner, &winners[0]) << "a tie: the smaller shape";
    EXPECT_EQ(largest_m_served(winners, winners[0]), 20);
    for (int a = 1; a <= 64; ++a)
        for (int b = a + 1; b <= 160; ++b) {
            winners = {winner(id, shape(a, 4096, 4096), 0.1, nullptr), winner(id, shape(b, 4096, 4096), 0.1, nullptr)};
            const int largest = largest_m_served(winners, winners[0]);
            ASSERT_EQ(select_kernel(winners, shape(largest, 4096, 4096)).winner, &winners[0]) << a << " " << b;
            ASSERT_NE(select_kernel(winners, shape(largest + 1, 4096, 4096)).winner, &winners[0]) << a << " " << b;
        }
}

// A larger tuned M whose kernel cannot run the winner's N and K is passed over by the rule
// there, so it does not bound the winner's reach; one that can, does.
TEST_F(Selection_, ALargerWinnerThatCannotRunTheShapeDoesNotBoundTheReach) {
    const Winner& at8 = *std::find_if(winners_.begin(), winners_.end(),
                                      [](const Winner& w) { return w.shape == shape(8, 4096, 4096); });
    EXPECT_EQ(largest_m_served(winners_, at8), 16);
    std::vector<Winner> with_12 = winners_;
    with_12.push_back(winner(id_, shape(12, 4096, 4096), 0.1, nullptr));
    const Winner& at8_again = *std::find_if(with_12.begin(), with_12.end(),
                                            [](const Winner& w) { return w.shape == shape(8, 4096, 4096); });
    EXPECT_EQ(largest_m_served(with_12, at8_again), 9);  // sqrt(8 * 12) = 9.8
    const auto cannot_run_m = [](int M) -> CannotRun {
        return [M](const Winner& w, const ShapeKey&) { return w.shape.M == M ? std::string("no") : std::string(); };
    };
    EXPECT_EQ(largest_m_served(with_12, at8_again, cannot_run_m(12)), 16) << "up to the mean with 32";
    EXPECT_EQ(largest_m_served(with_12, at8_again, cannot_run_m(32)), 9);
    // The rule agrees: with 12 passed over, M=16 selects the winner at 8.
    EXPECT_EQ(select_kernel(with_12, shape(16, 4096, 4096), cannot_run_m(12)).winner, &at8_again);
}

TEST_F(Selection_, AnotherDevicesWinnersAreNeverCandidates) {
    // The other device has an exact winner for M=2; this device's list does not.
    const Selection s = select_kernel(winners_, shape(2, 4096, 4096));
    ASSERT_EQ(s.kind, SelectionKind::Nearest);
    EXPECT_EQ(s.winner->device_id, id_);
    EXPECT_EQ(s.winner->shape.M, 1);
}

TEST_F(Selection_, NearestCandidatesAreOrderedByTheRule) {
    const std::vector<const Winner*> c = nearest_candidates(winners_, shape(16, 4096, 4096));
    ASSERT_EQ(c.size(), 4u);
    EXPECT_EQ(c[0]->shape.M, 8);
    EXPECT_EQ(c[1]->shape.M, 32);
    EXPECT_EQ(c[2]->shape.M, 128);  // 3 away in log2 M
    EXPECT_EQ(c[3]->shape.M, 1);    // 4 away
}
