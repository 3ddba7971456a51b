// The kernel cache's stop: asked before each compile, so a stopped build leaves the rest of
// its batch unbuilt instead of compiling it (a batch can hold hundreds of kernels). Its
// database: hits are not compiled again, damaged rows are.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <stdexcept>
#include <system_error>
#include <thread>

#include "db/verify.h"
#include "src/cuda/check.h"
#include "src/families/registry.h"
#include "tests/db/fixture.h"
#include "tuner/candidates.h"
#include "tuner/kernel_cache.h"

using namespace sgemm;
using sgemm::testing::TempDir;

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

// A process that may start no more threads (a container's limit on tasks) still builds: the
// compiles run on the calling thread. The pool's first thread failing to start threw out of
// build, and a later one's would have ended the process with the earlier ones unjoined. In a
// child, as 'nobody' (root is not held to RLIMIT_NPROC), allowed no process at all.
TEST(KernelCache, WithoutThreadsTheCompilesRunOnTheCallingThread) {
    constexpr int kCannotDropRoot = 77;
    const std::vector<Candidate> candidates = naive_candidates(2);
    const int status = sgemm::testing::in_child([&] {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(kCannotDropRoot);
        const rlimit no_process{0, 0};
        if (setrlimit(RLIMIT_NPROC, &no_process) != 0) throw Error("cannot limit the processes");
        try {
            std::thread([] {}).join();
            _exit(kCannotDropRoot);  // the limit holds no thread back here: nothing to test
        } catch (const std::system_error&) {
        }
        KernelCache cache(nullptr, Arch{90}, 2);
        cache.build(candidates);
        if (cache.compiled() != 2) throw Error("built " + std::to_string(cache.compiled()) + " of 2");
        for (const Candidate& c : candidates)
            if (!cache.get(c).kernel) throw Error(c.describe() + " has no kernel: " + cache.get(c).error);
    });
    if (status == kCannotDropRoot) GTEST_SKIP() << "this machine cannot hold 'nobody' to no thread (RLIMIT_NPROC)";
    EXPECT_EQ(status, 0);
}

// An exception other than sgemm::Error while compiling (std::bad_alloc, std::out_of_range
// from parsing a log) is that candidate's failure: escaping its compile thread, it ended the
// process.
TEST(KernelCache, AnyExceptionWhileCompilingIsTheCandidatesFailure) {
    Family throwing = find_family("naive");
    throwing.constraint_violation = [](const ParamValues&, const ArchLimits&) -> std::string {
        throw std::out_of_range("a number past its type");
    };
    Candidate c;
    c.family = &throwing;
    c.values = throwing.defaults;
    KernelCache cache(nullptr, Arch{90}, 2);
    cache.build({c});
    const BuiltKernel built = cache.get(c);
    EXPECT_FALSE(built.kernel.has_value());
    EXPECT_EQ(built.error, "a number past its type");
}

// NVRTC's own failure (its built-ins library missing or damaged) is no candidate's: taken as
// each one's, a tune found no kernel that compiles and stored cuBLAS for every shape. It stops
// the build, which throws it; the compile before it is kept, the ones after are not begun.
TEST(KernelCache, NvrtcsOwnFailureStopsTheBuildAndIsThrown) {
    const std::vector<Candidate> good = naive_candidates(2);
    Family failing = find_family("naive");
    failing.constraint_violation = [](const ParamValues&, const ArchLimits&) -> std::string {
        throw NvrtcError("NVRTC error: NVRTC_ERROR_BUILTIN_OPERATION_FAILURE");
    };
    Candidate c;
    c.family = &failing;
    c.values = failing.defaults;
    KernelCache cache(nullptr, Arch{90}, 1);  // one thread: the candidates in order
    EXPECT_THROW(cache.build({good[0], c, good[1]}), NvrtcError);
    EXPECT_TRUE(cache.get(good[0]).kernel.has_value());
    EXPECT_THROW(cache.get(c), Error) << "the failure is no build of the candidate";
    EXPECT_THROW(cache.get(good[1]), Error) << "compiled after NVRTC failed";
}

// A cubin cut short in the file used to reach the CUDA loader on every later tune (a
// segmentation fault), and a fresh compile could not replace it (the row was kept).
TEST(KernelCache, ADamagedCachedBinaryIsCompiledAgainAndReplaced) {
    const std::vector<Candidate> candidates = naive_candidates(1);
    const std::string key = kernel_cache_key(*candidates[0].family, candidates[0].values, Arch{90});
    TempDir dir;
    TuningStore store(dir.file("tuning.db"));
    {
        KernelCache first(&store, Arch{90}, 1);
        first.build(candidates);
        ASSERT_EQ(first.compiled(), 1);
    }
    {
        KernelCache sound(&store, Arch{90}, 1);
        sound.build(candidates);
        EXPECT_EQ(sound.compiled(), 0);
        EXPECT_EQ(sound.cache_hits(), 1) << "a sound row is used as it is";
    }
    auto cut = store.connection().query("UPDATE binaries SET cubin = substr(cubin, 1, length(cubin) / 2) WHERE cache_key = ?1");
    cut.bind(1, key);
    cut.run();
    ASSERT_FALSE(cubin_problem(*store.find_binary(key)).empty());

    KernelCache again(&store, Arch{90}, 1);
    again.build(candidates);
    EXPECT_EQ(again.cache_hits(), 0);
    EXPECT_EQ(again.compiled(), 1);
    EXPECT_TRUE(again.get(candidates[0]).kernel.has_value());
    EXPECT_EQ(cubin_problem(*store.find_binary(key)), "") << "the fresh compile replaced the damaged row";
}

}  // namespace
