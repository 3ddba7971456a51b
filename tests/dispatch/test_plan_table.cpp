// The hot path's map: finds what was inserted, keeps the first plan of a key, grows past its
// first array without losing a plan, and answers readers while writers add plans.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "src/dispatch/plan_table.h"

using namespace sgemm;

namespace {

ShapeKey key(int M, int N = 4096, int K = 4096) {
    ShapeKey k;
    k.M = M, k.N = N, k.K = K;
    return k;
}

std::unique_ptr<Plan> plan(const ShapeKey& k, Route route = Route::Kernel) {
    auto p = std::make_unique<Plan>();
    p->key = k;
    p->route = route;
    return p;
}

}  // namespace

TEST(PlanTable, FindsWhatWasInsertedAndOnlyThat) {
    PlanTable table;
    EXPECT_EQ(table.find(key(8)), nullptr);
    const Plan* p = table.insert(plan(key(8)));
    EXPECT_EQ(table.find(key(8)), p);
    EXPECT_EQ(table.find(key(9)), nullptr);
    EXPECT_EQ(table.size(), 1);
}

// Every field of the key counts. Many keys fill the table, so that a key that differs in one
// field lands, by its hash, on slots that hold plans, and is told apart from them by the
// comparison, not by an empty slot.
TEST(PlanTable, EveryFieldOfTheKeyCounts) {
    PlanTable table;
    std::vector<const Plan*> plans;
    for (int m = 1; m <= 120; ++m) plans.push_back(table.insert(plan(key(m))));
    for (int m = 1; m <= 120; ++m) {
        ASSERT_EQ(table.find(key(m)), plans[m - 1]);
        std::vector<ShapeKey> others(6, key(m));
        others[0].trans_a = true;
        others[1].trans_b = true;
        others[2].precision = GemmPrecision::tf32;
        others[3].alignment = 8;
        others[4].N = 4095;
        others[5].K = 4095;
        for (const ShapeKey& other : others) EXPECT_EQ(table.find(other), nullptr) << other.to_string();
    }
}

TEST(PlanTable, TheFirstPlanOfAKeyStays) {
    PlanTable table;
    const Plan* first = table.insert(plan(key(8), Route::Kernel));
    EXPECT_EQ(table.insert(plan(key(8), Route::Cublas)), first);
    EXPECT_EQ(table.find(key(8))->route, Route::Kernel);
    EXPECT_EQ(table.size(), 1);
}

TEST(PlanTable, GrowsWithoutLosingPlans) {
    PlanTable table;
    std::vector<const Plan*> inserted;
    for (int M = 1; M <= 5000; ++M) inserted.push_back(table.insert(plan(key(M))));
    EXPECT_EQ(table.size(), 5000);
    for (int M = 1; M <= 5000; ++M) ASSERT_EQ(table.find(key(M)), inserted[M - 1]) << M;
    EXPECT_EQ(table.plans(), inserted);
}

TEST(PlanTable, ReadersSeeEveryPublishedPlanWhileWritersGrowIt) {
    PlanTable table;
    constexpr int kKeys = 20000;
    std::atomic<int> published{0};
    std::atomic<bool> wrong{false};
    std::vector<std::thread> readers;
    for (int r = 0; r < 4; ++r)
        readers.emplace_back([&] {
            while (published.load() < kKeys) {
                const int upto = published.load();
                for (int M = 1; M <= upto; M += 97) {
                    const Plan* p = table.find(key(M, 7, 7));
                    if (!p || p->key != key(M, 7, 7)) wrong = true;
                }
            }
        });
    for (int M = 1; M <= kKeys; ++M) {
        table.insert(plan(key(M, 7, 7)));
        published = M;
    }
    for (std::thread& t : readers) t.join();
    EXPECT_FALSE(wrong) << "a reader missed a plan published before it looked";
}
