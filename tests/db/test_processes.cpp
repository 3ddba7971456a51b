// Several processes at once, and a process killed in the middle of a write.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include "db/publish.h"
#include "db/store.h"
#include "db/verify.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using namespace sgemm::testing;

// 8 processes open a file that does not exist yet, all at once, and each writes its
// measurements one transaction at a time: every row arrives, and no process sees
// "database is locked" (each waits its turn within the default busy timeout).
TEST(Processes, EightWritersAtOnceLoseNoRowAndNeverFailLocked) {
    TempDir dir;
    const std::string path = dir.file("shared.db");
    constexpr int kProcesses = 8, kRowsEach = 150;
    int start[2];
    ASSERT_EQ(pipe(start), 0);
    std::vector<std::unique_ptr<ChildProcess>> writers;
    for (int p = 0; p < kProcesses; ++p)
        writers.push_back(std::make_unique<ChildProcess>([&, p] {
            char go = 0;
            if (read(start[0], &go, 1) != 1) throw Error("start pipe");
            TuningStore store(path);
            const std::string id = store.add_device(h200());
            for (int i = 0; i < kRowsEach; ++i) {
                store.record_measurement(measurement(id, shape(p + 1, 64, i + 1), 0.01 * (i + 1)));
                if (i % 50 == 0)  // a shape of its own, and one all share, each process its own recorder
                    store.record_misses({Miss{id, shape(1000 + p, 64, 64), 1, "", "", ""}, Miss{id, shape(999, 64, 64), 1, "", "", ""}},
                                        "process " + std::to_string(p));
            }
        }));
    const std::string go(kProcesses, 'x');
    ASSERT_EQ(write(start[1], go.data(), go.size()), static_cast<ssize_t>(go.size()));  // all start together
    for (auto& w : writers) EXPECT_EQ(w->wait(), 0) << "a writer failed (its error is on stderr)";
    close(start[0]);
    close(start[1]);

    TuningStore store(path, OpenMode::ReadOnly);
    ASSERT_EQ(store.devices().size(), 1u);
    const std::string id = store.devices()[0].id();
    EXPECT_EQ(store.measurements().size(), static_cast<std::size_t>(kProcesses * kRowsEach));
    for (int p = 0; p < kProcesses; ++p)
        EXPECT_EQ(store.connection().integer("SELECT count(DISTINCT k) FROM measurements WHERE m = " + std::to_string(p + 1)),
                  kRowsEach)
            << "process " << p;
    const std::vector<Miss> misses = store.misses(id);
    ASSERT_EQ(misses.size(), static_cast<std::size_t>(kProcesses + 1));
    EXPECT_EQ(misses[0].shape, shape(999, 64, 64));
    EXPECT_EQ(misses[0].count, 3 * kProcesses) << "the shared shape: every recorder's count, summed";
    for (std::size_t i = 1; i < misses.size(); ++i) EXPECT_EQ(misses[i].count, 3);
    EXPECT_TRUE(verify_store(store).ok());
}

// 8 processes of one writer (dispatch's boot and file) write their first misses to a new file
// at once: the lookup of the writer's recorder and the adds are one transaction, so they agree
// on one recorder.
TEST(Processes, WritersThatStartTogetherAgreeOnOneRecorder) {
    TempDir dir;
    const std::string path = dir.file("shared.db");
    constexpr int kProcesses = 8;
    int start[2];
    ASSERT_EQ(pipe(start), 0);
    std::vector<std::unique_ptr<ChildProcess>> writers;
    for (int p = 0; p < kProcesses; ++p)
        writers.push_back(std::make_unique<ChildProcess>([&] {
            char go = 0;
            if (read(start[0], &go, 1) != 1) throw Error("start pipe");
            TuningStore store(path);
            const std::string id = store.add_device(h200());
            std::vector<Miss> batch;  // many shapes: a wide window between the lookup and the adds
            for (int k = 1; k <= 32; ++k) batch.push_back(Miss{id, shape(3, 64, k), 1, "", "", ""});
            store.record_misses_as(batch, "boot-1/f");
        }));
    const std::string go(kProcesses, 'x');
    ASSERT_EQ(write(start[1], go.data(), go.size()), static_cast<ssize_t>(go.size()));
    for (auto& w : writers) EXPECT_EQ(w->wait(), 0) << "a writer failed (its error is on stderr)";
    close(start[0]);
    close(start[1]);
    const std::vector<Miss> rows = TuningStore(path, OpenMode::ReadOnly).misses_by_recorder();
    ASSERT_EQ(rows.size(), 32u);
    for (const Miss& row : rows) {
        EXPECT_EQ(row.recorder, rows[0].recorder);
        EXPECT_EQ(row.count, kProcesses);
    }
}

// Killed inside a transaction: what it committed before is there, what it had not is not,
// and the file is sound.
TEST(Processes, AProcessKilledInsideATransactionLeavesTheLastCommit) {
    TempDir dir;
    const std::string path = dir.file("t.db");
    const int status = in_child([&] {
        TuningStore store(path);
        const std::string id = store.add_device(h200());
        for (int i = 0; i < 10; ++i) store.record_measurement(measurement(id, shape(1, 64, i + 1), 1));
        sqlite::Transaction open(store.connection());
        for (int i = 0; i < 50; ++i) store.record_measurement(measurement(id, shape(2, 64, i + 1), 1));
        store.put_binary(naive_binary());
        kill(getpid(), SIGKILL);
    });
    EXPECT_EQ(status, 128 + SIGKILL);
    TuningStore store(path);
    EXPECT_EQ(store.measurements().size(), 10u);
    EXPECT_FALSE(store.find_binary(naive_binary().cache_key));
    const VerifyReport report = verify_store(store);
    EXPECT_TRUE(report.ok()) << (report.problems.empty() ? "" : report.problems[0]);
    store.record_measurement(measurement(store.devices()[0].id(), shape(3, 3, 3), 1));  // and it takes writes
}

// Killed at arbitrary points of a stream of writes: the file always opens, passes verify
// and holds only whole rows.
TEST(Processes, AProcessKilledAtAnyPointOfAWriteLeavesAValidDatabase) {
    for (int delay_ms : {20, 60, 150, 300}) {
        SCOPED_TRACE("killed after " + std::to_string(delay_ms) + " ms");
        TempDir dir;
        const std::string path = write_sample(dir);
        ChildProcess writer([&] {
            TuningStore store(path);
            const std::string id = store.devices().at(0).id();
            const Binary b = naive_binary();
            for (int i = 1;; ++i) {
                store.record_measurement(measurement(id, shape(7, 64, i), 0.5));
                store.put_winner(winner(id, shape(7, 64, i), 0.5, &b));
            }
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        writer.kill(SIGKILL);
        EXPECT_EQ(writer.wait(), 128 + SIGKILL);
        TuningStore store(path);
        const VerifyReport report = verify_store(store);
        EXPECT_TRUE(report.ok()) << (report.problems.empty() ? "" : report.problems[0]);
        const auto written = store.connection().integer("SELECT count(*) FROM measurements WHERE m = 7");
        const auto won = store.connection().integer("SELECT count(*) FROM winners WHERE m = 7");
        EXPECT_TRUE(won == written || won == written - 1) << written << " measurements, " << won << " winners";
        EXPECT_EQ(store.connection().integer("SELECT count(*) FROM measurements WHERE median_ms IS NULL AND valid"), 0);
    }
}

// The size of a publisher's file under its other name beside `path` (db/publish.cpp), if one
// is there.
std::optional<std::uintmax_t> size_under_other_name(const std::string& path) {
    const std::string prefix = std::filesystem::path(path).filename().string() + ".incomplete-";
    std::error_code ec;  // the file may go while it is looked at
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
        if (entry.path().filename().string().rfind(prefix, 0) == 0) {
            const std::uintmax_t bytes = std::filesystem::file_size(entry.path(), ec);
            return ec ? 0 : bytes;
        }
    return std::nullopt;
}

// The sweep of what killed publishers left (db/publish.h) runs again and again while another
// process publishes a large database: the file it writes under another name is seen, and left
// alone, as a file just written, and the database arrives whole.
TEST(Processes, TheSweepLeavesTheFileOfAPublisherAtWork) {
    TempDir dir;
    const std::string path = dir.file("large.db");
    constexpr std::int64_t kBytes = 64 << 20;  // so that the write lasts while the sweeps run
    ChildProcess publisher([&] {
        sqlite::Connection source(path, sqlite::Access::Memory, std::chrono::milliseconds(0));
        source.exec("CREATE TABLE payload (bytes BLOB); INSERT INTO payload VALUES (randomblob(" +
                    std::to_string(kBytes) + "))");
        if (!publish_new_database(source, path)) throw Error("the path was taken");
    });
    int sweeps_while_written = 0;
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
         publisher.running() && std::chrono::steady_clock::now() < until;) {
        const bool incomplete_there = size_under_other_name(path).has_value();
        remove_abandoned_incomplete_files(path);
        sweeps_while_written += incomplete_there;
    }
    EXPECT_EQ(publisher.wait(), 0);
    EXPECT_GT(sweeps_while_written, 0) << "no sweep ran while the file was written: the test proves nothing";
    sqlite::Connection published(path, sqlite::Access::QueryOnly, std::chrono::milliseconds(0));
    EXPECT_EQ(published.integer("SELECT length(bytes) FROM payload"), kBytes);
}

// A publisher whose file a sweep takes (one at age 0 here; a publisher stopped for an hour, or
// a clock an hour off, in use) fails, saying no database was made, and publishes nothing.
// Publishes race sweeps again and again; each leaves the whole database or none. The sweep
// lands while VACUUM INTO writes, which SQLite then fails; a removal after it, before the open
// that switches the file to WAL mode, is too brief a moment to race, and that open's refusal
// to make a missing file is tested alone (BadInput.AWriterOfAFileThatMustBeThereMakesNone).
TEST(Processes, APublisherWhoseFileIsSweptPublishesNothing) {
    TempDir dir;
    constexpr int kPublishes = 6;
    constexpr std::int64_t kBytes = 16 << 20;
    int failed = 0;
    for (int p = 0; p < kPublishes; ++p) {
        const std::string path = dir.file("swept" + std::to_string(p) + ".db");
        ChildProcess publisher([&] {
            sqlite::Connection source(path, sqlite::Access::Memory, std::chrono::milliseconds(0));
            source.exec("CREATE TABLE payload (bytes BLOB); INSERT INTO payload VALUES (randomblob(" +
                        std::to_string(kBytes) + "))");
            try {
                publish_new_database(source, path);
            } catch (const DbError& e) {
                const std::string said = e.what();
                if (said.find("no database was made") == std::string::npos) throw;
                _exit(3);  // the failure this test expects, apart from any other
            }
        });
        // One sweep, once VACUUM INTO has written into the file (before, it would only make
        // the file anew, whole): a sweep that went on would also take the empty file that an
        // open which creates would make, and hide it.
        for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
             publisher.running() && std::chrono::steady_clock::now() < until;) {
            const bool found = size_under_other_name(path).value_or(0) > 0;
            remove_abandoned_incomplete_files(path, std::chrono::seconds(0));
            if (found) break;
        }
        const int status = publisher.wait();
        ASSERT_TRUE(status == 0 || status == 3) << "publish " << p << " ended with " << status;
        if (status == 3) {
            ++failed;
            EXPECT_FALSE(std::filesystem::exists(path)) << "a failed publish left " << path;
            continue;
        }
        sqlite::Connection published(path, sqlite::Access::QueryOnly, std::chrono::milliseconds(0));
        EXPECT_EQ(published.integer("SELECT length(bytes) FROM payload"), kBytes) << "publish " << p;
    }
    EXPECT_GT(failed, 0) << "no sweep took a publisher's file: the test proves nothing";
}
