// sgemm_dispatch_last_error()'s text: whole however long (an NVRTC log, two failures with
// their paths), replaced by each failure, each thread's own, and safe to write and read
// while the thread ends.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "src/dispatch/last_error.h"

using namespace sgemm;

TEST(LastError, AReasonLongerThanTheShortBufferIsKeptWhole) {
    const std::string path(5000, 'p');
    EXPECT_EQ(fail(SGEMM_DISPATCH_DATABASE_ERROR, "cannot write %s: read-only", path.c_str()),
              SGEMM_DISPATCH_DATABASE_ERROR);
    EXPECT_EQ(std::string(last_error()), "cannot write " + path + ": read-only");
}

TEST(LastError, EachFailureReplacesTheLastOneLongOrShort) {
    fail(SGEMM_DISPATCH_INVALID_SIZE, "short");
    EXPECT_STREQ(last_error(), "short");
    const std::string log(3000, 'l');
    fail(SGEMM_DISPATCH_COMPILE_ERROR, "%s", log.c_str());
    EXPECT_EQ(std::string(last_error()), log);
    fail(SGEMM_DISPATCH_INVALID_SIZE, "short again");
    EXPECT_STREQ(last_error(), "short again");
    const std::string shorter_log(2000, 's');
    fail(SGEMM_DISPATCH_COMPILE_ERROR, "%s", shorter_log.c_str());
    EXPECT_EQ(std::string(last_error()), shorter_log);
}

TEST(LastError, EachThreadHasItsOwn) {
    fail(SGEMM_DISPATCH_INVALID_VALUE, "this thread's");
    std::string other_thread_saw;
    std::thread([&] {
        other_thread_saw = last_error();
        fail(SGEMM_DISPATCH_INVALID_SIZE, "%s", std::string(2000, 'o').c_str());
    }).join();
    EXPECT_EQ(other_thread_saw, "");
    EXPECT_STREQ(last_error(), "this thread's");
}

namespace {

// A thread-local of the caller's that fails and reads the reason in its destructor, as a
// handle's RAII wrapper might at thread exit. Constructed before the library's own
// thread-locals, it is destroyed after them.
struct FailsAtThreadEnd {
    std::string* seen = nullptr;
    ~FailsAtThreadEnd() {
        if (!seen) return;
        fail(SGEMM_DISPATCH_DATABASE_ERROR, "%s", std::string(8000, 'e').c_str());
        *seen = last_error();
    }
};
thread_local FailsAtThreadEnd fails_at_thread_end;

}  // namespace

TEST(LastErrorDeathTest, AFailureAfterTheThreadsOwnCleanUpIsCutNotAUseAfterFree) {
    // In a child process: memory used after its free can abort there (glibc's double-free
    // check) without taking the test binary down.
    EXPECT_EXIT(
        {
            std::string seen;
            std::thread([&] {
                fails_at_thread_end.seen = &seen;
                fail(SGEMM_DISPATCH_COMPILE_ERROR, "%s", std::string(2000, 'l').c_str());
            }).join();
            std::exit(seen == std::string(1023, 'e') ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}
