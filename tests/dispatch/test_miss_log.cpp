// The miss log writes from a background thread long after create: it must write where create
// was told to, whatever the process's working directory is by then.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "db/store.h"
#include "src/dispatch/miss_log.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using sgemm::testing::h200;
using sgemm::testing::TempDir;

namespace {

// Runs in `folder` until destroyed, then back where it was.
class WorkingDirectory {
public:
    explicit WorkingDirectory(const std::string& folder) : previous_(std::filesystem::current_path()) {
        std::filesystem::current_path(folder);
    }
    ~WorkingDirectory() { std::filesystem::current_path(previous_); }
    WorkingDirectory(const WorkingDirectory&) = delete;
    WorkingDirectory& operator=(const WorkingDirectory&) = delete;

private:
    std::filesystem::path previous_;
};

}  // namespace

// An engine that gives "tuning.db" and then changes directory (a daemon moving to /) used to
// have its misses written to a new tuning.db there, and none in its database.
TEST(MissLog, ARelativePathStaysWhereItPointedAtCreate) {
    TempDir home, elsewhere;
    PlanTable plans;
    auto plan = std::make_unique<Plan>();
    plan->key.M = 3, plan->key.N = 5, plan->key.K = 7;
    const Plan* added = plans.insert(std::move(plan));
    const DeviceFingerprint device = h200();
    std::unique_ptr<MissLog> log;
    {
        WorkingDirectory at_create(home.path());
        log = std::make_unique<MissLog>(plans, "tuning.db", device, std::chrono::hours(1));
    }
    WorkingDirectory later(elsewhere.path());
    added->unwritten_misses = 4;
    EXPECT_EQ(log->flush(), 4) << log->last_error();
    log.reset();
    EXPECT_FALSE(std::filesystem::exists(elsewhere.file("tuning.db")));
    TuningStore store(home.file("tuning.db"), OpenMode::ReadOnly);
    const std::vector<Miss> misses = store.misses(device.id());
    ASSERT_EQ(misses.size(), 1u);
    EXPECT_EQ(misses[0].count, 4);
    EXPECT_EQ(misses[0].shape.M, 3);
}

// A process's logs (its dispatch handles) on one file count under one recorder, so rows grow
// per process and shape, not per handle; a file replaced under the same path (a new inode)
// gets another recorder, so that a merge of the old and the new file adds both counts.
TEST(MissLog, HandlesOfAProcessShareARecorderPerFile) {
    TempDir home;
    PlanTable plans;
    auto plan = std::make_unique<Plan>();
    plan->key.M = 3, plan->key.N = 5, plan->key.K = 7;
    const Plan* added = plans.insert(std::move(plan));
    const DeviceFingerprint device = h200();
    const std::string path = home.file("tuning.db");
    MissLog first(plans, path, device, std::chrono::hours(1)), second(plans, path, device, std::chrono::hours(1));
    added->unwritten_misses = 2;
    EXPECT_EQ(first.flush(), 2) << first.last_error();
    added->unwritten_misses = 3;
    EXPECT_EQ(second.flush(), 3) << second.last_error();
    std::vector<Miss> rows = TuningStore(path, OpenMode::ReadOnly).misses_by_recorder();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].count, 5);
    const std::string before = rows[0].recorder;

    for (const char* suffix : {"", "-wal", "-shm"})  // the file moves away; a new one takes its path
        if (std::filesystem::exists(path + suffix)) std::filesystem::rename(path + suffix, home.file("old.db") + suffix);
    added->unwritten_misses = 4;
    EXPECT_EQ(first.flush(), 4) << first.last_error();
    rows = TuningStore(path, OpenMode::ReadOnly).misses_by_recorder();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].count, 4);
    EXPECT_NE(rows[0].recorder, before);
}
