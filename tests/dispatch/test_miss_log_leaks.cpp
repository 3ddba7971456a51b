// A handle that records misses runs a writer thread (miss_log.h). A child forked from an
// engine has no copy of that thread, so whatever only the thread pointed to is lost in the
// child, and an engine's LeakSanitizer build reports it at the child's exit. This asks
// LeakSanitizer that nothing the writer was started with is lost so.
#include <gtest/gtest.h>
#include <sanitizer/lsan_interface.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "db/records.h"
#include "src/dispatch/miss_log.h"
#include "src/dispatch/plan_table.h"

TEST(MissLogLeaks, AChildForkedWhileTheWriterRunsLeaksNothing) {
    ASSERT_EQ(__lsan_do_recoverable_leak_check(), 0) << "leaks before the test: its checks would mean nothing";
    sgemm::PlanTable plans;
    // Nothing is counted, so no write (and no file) is ever made: the hour keeps the thread waiting.
    sgemm::MissLog log(plans, "never-written.db", sgemm::DeviceFingerprint{}, std::chrono::hours(1),
                       sgemm::MissingDatabase::create);
    ASSERT_EQ(__lsan_do_recoverable_leak_check(), 0) << "a leak with the writer running, in the process that started it";
    const pid_t child = fork();
    ASSERT_GE(child, 0) << "fork failed";
    // The child leaves through _exit: destroying its copy of the log would join a thread it has not got.
    if (child == 0) _exit(__lsan_do_recoverable_leak_check() == 0 ? 0 : 1);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the forked child reported a leak from the writer thread (see above), status " << status;
}
