// The miss log writes from a background thread long after create: it must write where create
// was told to, whatever the process's working directory is by then.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <functional>
#include <new>
#include <cstdlib>
#include <system_error>

#include "db/merge.h"
#include "db/schema.h"
#include "db/store.h"
#include "src/dispatch/miss_log.h"
#include "src/dispatch/status_error.h"
#include "tests/db/fixture.h"
#include "tests/db/link_interposer.h"

using namespace sgemm;
using sgemm::testing::h200;
using sgemm::testing::in_child;
using sgemm::testing::instead_of_next_link;
using sgemm::testing::link_as_the_system_does;
using sgemm::testing::link_calls;
using sgemm::testing::system_link;
using sgemm::testing::TempDir;

namespace {

// Made before main, so destroyed after every static first used later; when armed (in a child),
// its destructor runs `run` and ends the process with what it returns.
struct AtTheEndOfExit {
    std::function<int()> run;
    ~AtTheEndOfExit() {
        if (run) _exit(run());
    }
} g_at_the_end_of_exit;

// Memory running out on this thread, for MissLog.AWriteOutOfMemorySaysSoAndKeepsTheCounts: once
// armed, an allocation of `g_out_of_memory_from` bytes or more is refused, and every one after
// it, as memory that has run out stays out. Global operator new is replaced in this whole test
// program; it allocates as the default does while unarmed.
thread_local std::size_t g_out_of_memory_from = 0;  // 0: not armed
thread_local bool g_memory_ran_out = false;

}  // namespace

void* operator new(std::size_t size) {
    if (g_out_of_memory_from != 0 && (g_memory_ran_out || size >= g_out_of_memory_from)) {
        g_memory_ran_out = true;
        throw std::bad_alloc();
    }
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
// Out of line: inlined into a caller, free() on a pointer from new makes GCC warn of a mismatch.
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

// The plan of the shape key M=3 N=5 K=7, added to `plans`: the key the misses are counted on.
const Plan* add_a_plan(PlanTable& plans) {
    auto plan = std::make_unique<Plan>();
    plan->key.M = 3, plan->key.N = 5, plan->key.K = 7;
    return plans.insert(std::move(plan));
}

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

// A process that may start no more threads (a container's limit on tasks) gets HOST_ERROR
// from create, the host's refusal, where it got INTERNAL_ERROR, "a bug in libsgemm_dispatch".
// In a child, as 'nobody' (root is not held to RLIMIT_NPROC), allowed no process at all.
TEST(MissLog, NoThreadForTheWriterIsTheHostsRefusal) {
    constexpr int kCannotDropRoot = 77;
    TempDir dir;
    PlanTable plans;
    const int status = in_child([&] {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(kCannotDropRoot);
        const rlimit no_process{0, 0};
        if (setrlimit(RLIMIT_NPROC, &no_process) != 0) throw Error("cannot limit the processes");
        try {
            MissLog log(plans, dir.file("t.db"), h200(), std::chrono::hours(1), MissingDatabase::create);
        } catch (const std::system_error& e) {
            const std::string what = e.what();
            if (status_of(e, SGEMM_DISPATCH_INTERNAL_ERROR) != SGEMM_DISPATCH_HOST_ERROR ||
                what.find("starting the thread that writes the misses: ") != 0)
                throw Error("not the host's refusal: " + what);
            return;
        }
        throw Error("the writer's thread started with no process allowed");
    });
    if (status == kCannotDropRoot) GTEST_SKIP() << "this root cannot become 'nobody', whom RLIMIT_NPROC holds";
    EXPECT_EQ(status, 0);
}

// An engine that gives "tuning.db" and then changes directory (a daemon moving to /) used to
// have its misses written to a new tuning.db there, and none in its database.
TEST(MissLog, ARelativePathStaysWhereItPointedAtCreate) {
    TempDir home, elsewhere;
    PlanTable plans;
    const Plan* added = add_a_plan(plans);
    const DeviceFingerprint device = h200();
    std::unique_ptr<MissLog> log;
    {
        WorkingDirectory at_create(home.path());
        log = std::make_unique<MissLog>(plans, "tuning.db", device, std::chrono::hours(1), MissingDatabase::create);
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

// The logs of a process's dispatch handles on one file count under one recorder, so rows do
// not grow per handle; a file replaced under the same path (a new inode) gets another
// recorder, so that a merge of the old and the new file adds both counts.
TEST(MissLog, HandlesOfAProcessShareARecorderPerFile) {
    TempDir home;
    PlanTable plans;
    const Plan* added = add_a_plan(plans);
    const DeviceFingerprint device = h200();
    const std::string path = home.file("tuning.db");
    MissLog first(plans, path, device, std::chrono::hours(1), MissingDatabase::create),
        second(plans, path, device, std::chrono::hours(1), MissingDatabase::create);
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

// A handle created on a database does not make it again once it is gone (moved or removed by
// a deployment): a new file with misses alone would let the next create find no winners and
// send every shape to the fallback without an error. The counts wait for the file to be back.
// A handle created without a database makes it, as before.
TEST(MissLog, ADatabaseGoneSinceCreateIsNotMadeAgain) {
    TempDir home;
    PlanTable plans;
    const Plan* added = add_a_plan(plans);
    const DeviceFingerprint device = h200();
    const std::string path = home.file("models/tuning.db");
    TuningStore(path, OpenMode::ReadWrite).add_device(device);  // the database create read
    MissLog log(plans, path, device, std::chrono::hours(1), MissingDatabase::refuse);
    for (const char* suffix : {"", "-wal", "-shm"})
        if (std::filesystem::exists(path + suffix)) std::filesystem::rename(path + suffix, home.file("aside.db") + suffix);
    std::filesystem::remove(home.file("models"));
    added->unwritten_misses = 4;
    EXPECT_EQ(log.flush(), 0);
    EXPECT_NE(log.last_error().find("writing misses to " + path + ": the database is gone (moved or removed since "
                                    "create); the counts wait until it is back"),
              std::string::npos)
        << log.last_error();
    EXPECT_FALSE(std::filesystem::exists(home.file("models"))) << "the folder was made again";
    EXPECT_EQ(log.pending(), 4);

    std::filesystem::create_directory(home.file("models"));
    for (const char* suffix : {"", "-wal", "-shm"})
        if (std::filesystem::exists(home.file("aside.db") + suffix))
            std::filesystem::rename(home.file("aside.db") + suffix, path + suffix);
    EXPECT_EQ(log.flush(), 4) << log.last_error();
    EXPECT_EQ(log.last_error(), "");
    EXPECT_EQ(TuningStore(path, OpenMode::ReadOnly).misses(device.id()).at(0).count, 4);

    MissLog without_database(plans, home.file("new.db"), device, std::chrono::hours(1), MissingDatabase::create);
    added->unwritten_misses = 2;
    EXPECT_EQ(without_database.flush(), 2) << without_database.last_error();
    EXPECT_TRUE(std::filesystem::exists(home.file("new.db")));
}

// A handle created without a database makes the file whole with its first misses: from the
// moment the link puts it at its path (db/publish.h) it holds them. It was made with the empty
// schema first and written in place after, so a write that failed then (a full disk) left an
// empty tuning database. A first write that fails leaves no file and keeps the counts.
TEST(MissLog, AFirstWriteMakesTheDatabaseWithItsMisses) {
    TempDir home;
    PlanTable plans;
    const Plan* added = add_a_plan(plans);
    const std::string path = home.file("tuning.db");
    MissLog log(plans, path, h200(), std::chrono::hours(1), MissingDatabase::create);
    instead_of_next_link([](const char*, const char*) {
        errno = EIO;
        return -1;
    });
    added->unwritten_misses = 3;
    EXPECT_EQ(log.flush(), 0);
    EXPECT_NE(log.last_error().find("so no database was made there"), std::string::npos) << log.last_error();
    EXPECT_TRUE(std::filesystem::is_empty(home.path())) << "a failed first write left a file";
    EXPECT_EQ(log.pending(), 3);

    std::int64_t misses_at_the_link = -1;
    instead_of_next_link([&](const char* from, const char* to) {
        const int linked = system_link(from, to);
        try {
            sqlite::Connection file(to, sqlite::Access::QueryOnly, std::chrono::milliseconds(0));
            misses_at_the_link = file.integer("SELECT coalesce(sum(count), 0) FROM misses");
        } catch (const std::exception& e) {
            ADD_FAILURE() << "reading the file as it appeared: " << e.what();
        }
        return linked;
    });
    EXPECT_EQ(log.flush(), 3) << log.last_error();
    link_as_the_system_does();
    EXPECT_EQ(link_calls(), 1);
    EXPECT_EQ(misses_at_the_link, 3) << "the file appeared without its misses";
    // The next write, in place, counts under the recorder the first one made: the misses named
    // the file by an identity the link kept.
    added->unwritten_misses = 2;
    EXPECT_EQ(log.flush(), 2) << log.last_error();
    const std::vector<Miss> rows = TuningStore(path, OpenMode::ReadOnly).misses_by_recorder();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].count, 5);
}

// Where only the sync of the folder after the link fails, the file is there with the misses:
// they are written (a power cut may lose them, as it may an in-place write's last commits),
// not kept to be written, and so counted, again. The folder is moved away just after the
// link, so that its sync finds no folder.
TEST(MissLog, AFirstWriteWhoseFolderSyncFailsIsWrittenOnce) {
    TempDir home;
    PlanTable plans;
    const Plan* added = add_a_plan(plans);
    std::filesystem::create_directory(home.file("models"));
    MissLog log(plans, home.file("models/tuning.db"), h200(), std::chrono::hours(1), MissingDatabase::create);
    instead_of_next_link([&](const char* from, const char* to) {
        const int linked = system_link(from, to);
        std::filesystem::rename(home.file("models"), home.file("moved"));
        return linked;
    });
    added->unwritten_misses = 3;
    EXPECT_EQ(log.flush(), 3) << log.last_error();
    link_as_the_system_does();
    EXPECT_EQ(link_calls(), 1);
    EXPECT_EQ(log.pending(), 0);
    EXPECT_EQ(TuningStore(home.file("moved/tuning.db"), OpenMode::ReadOnly).misses(h200().id()).at(0).count, 3);
}

// A handle recording misses into a file an older sgemm wrote (dispatch reads such a file from
// a copy in memory) upgrades the file at its first write of misses, as the README says, and
// the misses are there.
TEST(MissLog, TheFirstWriteUpgradesAFileOfAnOlderSchema) {
    TempDir home;
    for (int version = 1; version < latest_schema_version(); ++version) {
        SCOPED_TRACE("schema version " + std::to_string(version));
        PlanTable plans;
        const Plan* added = add_a_plan(plans);
        const std::string path = sgemm::testing::file_of_version(home, version, h200(), "v" + std::to_string(version) + ".db");
        MissLog log(plans, path, h200(), std::chrono::hours(1), MissingDatabase::refuse);
        added->unwritten_misses = 3;
        EXPECT_EQ(log.flush(), 3) << log.last_error();
        EXPECT_EQ(sgemm::testing::user_version(path), latest_schema_version());
        const std::vector<Miss> misses = TuningStore(path, OpenMode::ReadOnly).misses(h200().id());
        ASSERT_EQ(misses.size(), 1u);
        EXPECT_EQ(misses[0].count, 3);
    }
}

// stop() writes what is left and returns why that failed (destroy reports it), once: a later
// call does nothing and returns "".
TEST(MissLog, StopSaysOnceWhyItsLastWriteFailed) {
    TempDir home;
    PlanTable plans;
    const Plan* added = add_a_plan(plans);
    const std::string path = home.file("tuning.db");
    TuningStore(path, OpenMode::ReadWrite).add_device(h200());
    MissLog log(plans, path, h200(), std::chrono::hours(1), MissingDatabase::refuse);
    std::filesystem::remove(path);
    added->unwritten_misses = 3;
    const std::string why = log.stop();
    EXPECT_NE(why.find("writing misses to " + path + ": the database is gone"), std::string::npos) << why;
    EXPECT_EQ(log.pending(), 3);
    EXPECT_EQ(log.stop(), "");
}

// A write that runs out of memory fails, keeps its counts, and says why, although there is no
// room left to make the message: it used to make one in its catch and, refused, end the process
// (std::terminate, from a noexcept call). In a child, which that would end. The database's path
// is long, so that copying it is the allocation refused; every one after it is refused too.
TEST(MissLog, AWriteOutOfMemorySaysSoAndKeepsTheCounts) {
    TempDir home;
    const std::string path = home.file(std::string(200, 'a') + "/" + std::string(200, 'b') + "/tuning.db");
    const int status = in_child([&] {
        PlanTable plans;
        add_a_plan(plans)->unwritten_misses = 4;
        MissLog log(plans, path, h200(), std::chrono::hours(1), MissingDatabase::create);
        g_out_of_memory_from = 400;
        const std::int64_t written = log.flush();
        g_out_of_memory_from = 0;
        if (!g_memory_ran_out) throw Error("the write never ran out of memory: the test no longer tests it");
        if (written != 0) throw Error("a write out of memory said it wrote " + std::to_string(written));
        if (log.last_error() != "writing misses to " + path + ": out of memory")
            throw Error("the write out of memory said: " + log.last_error());
        if (log.pending() != 4) throw Error("the counts were lost: " + std::to_string(log.pending()) + " pending");
        if (log.flush() != 4) throw Error("the next write failed: " + log.last_error());
        if (!log.last_error().empty()) throw Error("a write that worked left an error: " + log.last_error());
    });
    EXPECT_EQ(status, 0);
}

// An engine that exits without destroying its handle leaves the miss writer running while
// exit destroys the process's statics: what a write reads must outlive them. The child makes
// a write at the very end of exit, after the destructors of every static first used once the
// program had started (this object was made before main, so it is destroyed after them).
TEST(MissLog, AWriteAtTheEndOfExitReadsNothingExitFreed) {
    TempDir home;
    const std::string path = home.file("tuning.db");
    TuningStore(path, OpenMode::ReadWrite).add_device(h200());
    const int status = in_child([&] {
        auto* plans = new PlanTable;  // the handle's, never destroyed
        add_a_plan(*plans)->unwritten_misses = 4;
        auto* log = new MissLog(*plans, path, h200(), std::chrono::hours(1), MissingDatabase::refuse);
        g_at_the_end_of_exit.run = [log] {
            if (log->flush() == 4) return 0;
            std::fprintf(stderr, "the write at exit failed: %s\n", log->last_error().c_str());
            return 3;
        };
        std::exit(0);  // exit's destructors, as a return from main runs them
    });
    EXPECT_EQ(status, 0);
    EXPECT_EQ(TuningStore(path, OpenMode::ReadOnly).misses(h200().id()).at(0).count, 4);
}

// The writer is the boot and the file: no process plays a part, and another boot (a clone of
// the disk on another machine), another inode (a copy) or another birth time (a later file on
// a reused inode number) is another writer. Without a boot or a birth time, the process is.
TEST(MissWriter, NamesTheBootAndTheFileNotTheProcess) {
    FileIdentity file;
    file.device = 0x803, file.inode = 1234, file.has_birth_time = true;
    file.birth_seconds = 1796190003, file.birth_nanoseconds = 508846914;
    const std::string named = miss_writer(file, "boot-a", "process-1");
    EXPECT_EQ(named, miss_writer(file, "boot-a", "process-2"));
    EXPECT_EQ(named.find("process"), std::string::npos) << named;
    EXPECT_NE(miss_writer(file, "boot-b", "process-1"), named);
    FileIdentity reborn = file;
    reborn.birth_nanoseconds += 1;
    EXPECT_NE(miss_writer(reborn, "boot-a", "process-1"), named);
    FileIdentity copy = file;
    copy.inode += 1;
    EXPECT_NE(miss_writer(copy, "boot-a", "process-1"), named);

    FileIdentity no_birth = file;
    no_birth.has_birth_time = false;
    EXPECT_NE(miss_writer(no_birth, "boot-a", "process-1"), miss_writer(no_birth, "boot-a", "process-2"));
    EXPECT_NE(miss_writer(file, "", "process-1"), miss_writer(file, "", "process-2")) << "no boot id";

    // Linux gives every boot an id, a UUID (8-4-4-4-12 hex digits): machine_boot is it as the
    // kernel prints it, without the line's end.
    std::ifstream kernel_file("/proc/sys/kernel/random/boot_id");
    std::string kernel_id;
    ASSERT_TRUE(std::getline(kernel_file, kernel_id)) << "no /proc/sys/kernel/random/boot_id";
    bool uuid = kernel_id.size() == 36;
    for (std::size_t i = 0; uuid && i < kernel_id.size(); ++i)
        uuid = (i == 8 || i == 13 || i == 18 || i == 23) ? kernel_id[i] == '-' : std::isxdigit(static_cast<unsigned char>(kernel_id[i])) != 0;
    EXPECT_TRUE(uuid) << kernel_id;
    EXPECT_EQ(machine_boot(), kernel_id);
}

// Processes started one after another on one file (an engine run once per request) add to
// one row per shape, not a row each. A copy of the file counts apart, and so does the file
// once another database has been copied onto it in place (the same inode): merged, every
// call counts once.
TEST(MissLog, ProcessesShareTheFilesRecorderAndCopiesCountApart) {
    TempDir home;
    const std::string path = home.file("tuning.db");
    const DeviceFingerprint device = h200();
    const auto run_process = [&](const std::string& file, std::int64_t calls) {
        return in_child([&] {
            PlanTable plans;
            add_a_plan(plans)->unwritten_misses = calls;
            MissLog log(plans, file, device, std::chrono::hours(1), MissingDatabase::create);
            if (log.flush() != calls) throw Error("flush: " + log.last_error());
        });
    };
    const auto rows_of = [](const std::string& file) { return TuningStore(file, OpenMode::ReadOnly).misses_by_recorder(); };
    ASSERT_EQ(run_process(path, 2), 0);
    ASSERT_EQ(run_process(path, 3), 0);
    const std::vector<Miss> rows = rows_of(path);
    if (file_identity(path).has_birth_time) {
        ASSERT_EQ(rows.size(), 1u);
        EXPECT_EQ(rows[0].count, 5);
        const std::string writer = miss_writer(file_identity(path), machine_boot(), "");
        ASSERT_GT(rows[0].recorder.size(), writer.size());
        EXPECT_EQ(rows[0].recorder.substr(rows[0].recorder.size() - writer.size()), writer) << rows[0].recorder;
    } else {  // a filesystem without birth times: each process counts apart (MissWriter)
        ASSERT_EQ(rows.size(), 2u);
        EXPECT_EQ(rows[0].count + rows[1].count, 5);
    }

    // A copy (another inode) is another writer. Files are closed here: their WAL is checkpointed.
    const std::string harvested = home.file("harvested.db"), copy = home.file("copy.db");
    std::filesystem::copy_file(path, harvested);
    std::filesystem::copy_file(path, copy);
    ASSERT_EQ(run_process(copy, 4), 0);
    EXPECT_EQ(rows_of(copy).size(), rows.size() + 1);

    // Another database copied onto the file in place: the writer's name is the same, but the
    // file holds none of its rows, so the next process starts a recorder of its own instead
    // of counting on from 0 under the one whose 5 calls were harvested.
    const std::string foreign = home.file("foreign.db");
    ASSERT_EQ(run_process(foreign, 1), 0);
    const FileIdentity before = file_identity(path);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << sgemm::testing::bytes_of(foreign);
    ASSERT_EQ(file_identity(path).inode, before.inode) << "the copy must land in place";
    ASSERT_EQ(run_process(path, 6), 0);
    EXPECT_EQ(rows_of(path).size(), 2u) << "the foreign database's row and the new recorder's";

    TuningStore hub(home.file("hub.db"));
    for (const std::string& file : {harvested, copy, path, harvested, copy, path}) {  // each twice
        TuningStore other(file, OpenMode::ReadOnly);
        merge_store(hub, other);
    }
    ASSERT_EQ(hub.misses(device.id()).size(), 1u);
    EXPECT_EQ(hub.misses(device.id())[0].count, 5 + 4 + 1 + 6);
}
