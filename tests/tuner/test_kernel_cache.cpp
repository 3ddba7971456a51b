// The kernel cache's stop: asked before each compile, so a stopped build leaves the rest of
// its batch unbuilt instead of compiling it (a batch can hold hundreds of kernels).
#include <gtest/gtest.h>

#include "tuner/candidates.h"
#include "tuner/kernel_cache.h"

using namespace sgemm;

namespace {

// The first `count` naive candidates of a small shape: quick compiles.
std::vector<Candidate> naive_candidates(std::size_t count) {
    ShapeKey key;
    key.M = 64, key.N = 64, key.K = 64;
    std::vector<Candidate> candidates = enumerate_candidates(key, Arch{90}, {"naive"});
    if (candidates.size() < count) throw Error("too few naive candidates");
    candidates.resize(count);
    return candidates;
}

TEST(KernelCache, AStopEndsABuildBeforeItsNextCompile) {
    const std::vector<Candidate> candidates = naive_candidates(3);

    int compiles_begun = 0;
    // One thread, so the stop is asked exactly once before each compile: yes from the second.
    KernelCache cache(nullptr, Arch{90}, 1, [&] { return ++compiles_begun > 1; });
    cache.build(candidates);
    EXPECT_EQ(cache.compiled(), 1);
    EXPECT_TRUE(cache.get(candidates[0]).kernel.has_value());
    EXPECT_THROW(cache.get(candidates[1]), Error);
    EXPECT_THROW(cache.get(candidates[2]), Error);
}

TEST(KernelCache, WithoutAStopEveryCandidateIsBuilt) {
    const std::vector<Candidate> candidates = naive_candidates(2);
    KernelCache cache(nullptr, Arch{90}, 2);
    cache.build(candidates);
    EXPECT_EQ(cache.compiled(), 2);
    for (const Candidate& c : candidates) EXPECT_TRUE(cache.get(c).kernel.has_value()) << c.describe();
}

}  // namespace
