// The miss log writes from a background thread long after create: it must write where create
// was told to, whatever the process's working directory is by then.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "db/merge.h"
#include "db/store.h"
#include "src/dispatch/miss_log.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using sgemm::testing::h200;
using sgemm::testing::in_child;
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

// A file with a birth time names its recorder alone: the process id plays no part, and a
// file born at another moment (a later file on a reused inode number) or with another inode
// names another. Without a birth time, each process names its own.
TEST(MissRecorder, AFileWithABirthTimeNamesItsRecorderAlone) {
    FileIdentity file;
    file.device = 0x803, file.inode = 1234, file.has_birth_time = true;
    file.birth_seconds = 1796190003, file.birth_nanoseconds = 508846914;
    const std::string named = miss_recorder(file, "process-a");
    EXPECT_EQ(named, miss_recorder(file, "process-b"));
    EXPECT_EQ(named.find("process"), std::string::npos) << named;
    FileIdentity reborn = file;
    reborn.birth_nanoseconds += 1;
    EXPECT_NE(miss_recorder(reborn, "process-a"), named);
    FileIdentity other = file;
    other.inode += 1;
    EXPECT_NE(miss_recorder(other, "process-a"), named);

    file.has_birth_time = false;
    EXPECT_NE(miss_recorder(file, "process-a"), miss_recorder(file, "process-b"));
    EXPECT_EQ(miss_recorder(file, "process-a").rfind("process-a@", 0), 0u) << miss_recorder(file, "process-a");
}

// Processes started one after another on one file (an engine run once per request) add to
// one row per shape where the filesystem gives the file a birth time, not a row each; a copy
// of the file counts apart, so merging the copy back adds its calls once.
TEST(MissLog, ProcessesShareTheFilesRecorderAndACopyCountsApart) {
    TempDir home;
    const std::string path = home.file("tuning.db"), copy = home.file("copy.db");
    const DeviceFingerprint device = h200();
    const auto run_process = [&](const std::string& file, std::int64_t calls) {
        return in_child([&] {
            PlanTable plans;
            auto plan = std::make_unique<Plan>();
            plan->key.M = 3, plan->key.N = 5, plan->key.K = 7;
            plans.insert(std::move(plan))->unwritten_misses = calls;
            MissLog log(plans, file, device, std::chrono::hours(1));
            if (log.flush() != calls) throw Error("flush: " + log.last_error());
        });
    };
    ASSERT_EQ(run_process(path, 2), 0);
    ASSERT_EQ(run_process(path, 3), 0);
    const bool shared = file_identity(path).has_birth_time;
    std::vector<Miss> rows = TuningStore(path, OpenMode::ReadOnly).misses_by_recorder();
    if (shared) {
        ASSERT_EQ(rows.size(), 1u);
        EXPECT_EQ(rows[0].count, 5);
        // Forked children share the parent's process id once it has one, so the row count
        // alone would not tell: the recorder must be the file's name, free of any process.
        EXPECT_EQ(rows[0].recorder, miss_recorder(file_identity(path), "no process"));
    } else {  // this filesystem gives no birth time: a recorder per process
        ASSERT_EQ(rows.size(), 2u);
    }

    std::filesystem::copy_file(path, copy);  // closed: the WAL was checkpointed into it
    ASSERT_EQ(run_process(copy, 4), 0);
    EXPECT_EQ(TuningStore(copy, OpenMode::ReadOnly).misses_by_recorder().size(), rows.size() + 1);
    TuningStore ours(path), theirs(copy, OpenMode::ReadOnly);
    merge_store(ours, theirs);
    ASSERT_EQ(ours.misses(device.id()).size(), 1u);
    EXPECT_EQ(ours.misses(device.id())[0].count, 9) << "2 + 3 from this file, 4 from its copy";
    merge_store(ours, theirs);
    EXPECT_EQ(ours.misses(device.id())[0].count, 9) << "merged twice, counted once";
}
