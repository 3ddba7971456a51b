// sgemm_dispatch_last_error()'s text: whole however long (an NVRTC log, two failures with
// their paths), replaced by each failure, and each thread's own.
#include <gtest/gtest.h>

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
