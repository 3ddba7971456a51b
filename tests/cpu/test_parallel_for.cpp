// The tuner's host work spread over the cores.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "src/util/parallel_for.h"

using namespace sgemm;

// Every index is given once, in contiguous pieces that together cover [0, count); the first
// piece runs on the calling thread. The pieces are judged after the call: every helper
// thread has been joined by then.
TEST(ParallelFor, GivesEveryIndexOnceInContiguousPieces) {
    for (const std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{4095}}) {
        SCOPED_TRACE(count);
        std::vector<int> seen(count, 0);
        std::mutex mutex;
        std::vector<std::pair<std::size_t, std::size_t>> pieces;
        std::thread::id first_piece_thread;
        parallel_for(count, [&](std::size_t begin, std::size_t end) {
            for (std::size_t i = begin; i < end; ++i) ++seen[i];
            const std::lock_guard<std::mutex> lock(mutex);
            pieces.emplace_back(begin, end);
            if (begin == 0) first_piece_thread = std::this_thread::get_id();
        });
        for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(seen[i], 1) << "index " << i;
        std::sort(pieces.begin(), pieces.end());
        ASSERT_FALSE(pieces.empty());
        EXPECT_EQ(pieces.front().first, 0u);
        EXPECT_EQ(pieces.back().second, count);
        for (std::size_t p = 1; p < pieces.size(); ++p) EXPECT_EQ(pieces[p].first, pieces[p - 1].second);
        EXPECT_LE(pieces.size(), usable_cpus());
        EXPECT_EQ(first_piece_thread, std::this_thread::get_id());
    }
}

TEST(ParallelFor, NothingToDoCallsNothing) {
    bool called = false;
    parallel_for(0, [&](std::size_t, std::size_t) { called = true; });
    EXPECT_FALSE(called);
}

// A piece's exception reaches the caller once every thread is joined; it ended the process
// (an exception leaving a thread) where it came from a helper's piece.
TEST(ParallelFor, AnExceptionInAnyPieceReachesTheCallerAfterEveryPieceRan) {
    // The caller's piece throws, then the last one: a helper's where there are two or more.
    for (const bool in_last_piece : {false, true}) {
        std::atomic<std::size_t> done{0};
        try {
            parallel_for(1000, [&](std::size_t begin, std::size_t end) {
                done += end - begin;
                if (in_last_piece ? end == 1000 : begin == 0)
                    throw std::runtime_error("piece at " + std::to_string(begin));
            });
            ADD_FAILURE() << "nothing thrown";
        } catch (const std::runtime_error& e) {
            EXPECT_EQ(std::string(e.what()).rfind("piece at ", 0), 0u) << e.what();
        }
        EXPECT_EQ(done.load(), 1000u) << "every piece ran before the throw reached the caller";
    }
}

// A process held to one CPU (a container's cpuset, taskset) runs one piece, on the calling
// thread: hardware_concurrency counted the machine's CPUs, and started a thread for each.
TEST(ParallelFor, ACallerHeldToOneCpuRunsOnePiece) {
    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int first = 0;
    while (!CPU_ISSET(first, &allowed)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    std::size_t pieces = 0;
    std::thread::id ran_on;
    parallel_for(1000, [&](std::size_t, std::size_t) { ++pieces, ran_on = std::this_thread::get_id(); });
    const std::size_t usable = usable_cpus();
    ASSERT_EQ(sched_setaffinity(0, sizeof allowed, &allowed), 0);
    EXPECT_EQ(usable, 1u);
    EXPECT_EQ(pieces, 1u);
    EXPECT_EQ(ran_on, std::this_thread::get_id());
}
