// Migrations: from an empty file, from every earlier version, and the refusals.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "db/merge.h"
#include "db/schema.h"
#include "db/sqlite.h"
#include "db/store.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using namespace sgemm::testing;

namespace {

// Opening `path` for writing and for reading both fail with a message that says `says`, and
// leave the file's bytes as they were.
void expect_every_open_refused(const std::string& path, const std::string& says) {
    const std::string before = bytes_of(path);
    for (OpenMode mode : {OpenMode::ReadWrite, OpenMode::ReadOnly}) {
        try {
            TuningStore store(path, mode);
            ADD_FAILURE() << "opened " << path;
        } catch (const DbError& e) {
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(bytes_of(path), before);
}

}  // namespace

// The SQLite loaded at run time may be older than the build's (another machine's, or an
// engine's own copy): a connection names it, rather than fail on the schema's first generated
// column.
TEST(Schema, AnSqliteOlderThanTheSchemaNeedsIsNamed) {
    EXPECT_EQ(sqlite::sqlite_too_old(3031001),
              "the SQLite this process runs, 3.31.1, is older than 3.32.0, which the tuning database needs: install a "
              "newer libsqlite3");
    EXPECT_EQ(sqlite::sqlite_too_old(3032000), "");
    EXPECT_EQ(sqlite::sqlite_too_old(sqlite3_libversion_number()), "") << "the build requires 3.32 at least";
}

TEST(Schema, MigrationsAreNumberedFromOneWithoutGaps) {
    ASSERT_GE(migrations().size(), 2u);
    for (std::size_t i = 0; i < migrations().size(); ++i) {
        EXPECT_EQ(migrations()[i].version, static_cast<int>(i) + 1);
        EXPECT_FALSE(migrations()[i].sql.empty());
    }
    EXPECT_EQ(latest_schema_version(), static_cast<int>(migrations().size()));
}

TEST(Schema, AnEmptyFileGetsTheLatestSchemaInWalMode) {
    TempDir dir;
    const std::string path = dir.file("sub/folder/tuning.db");  // the folders are created too
    {
        TuningStore store(path);
        EXPECT_EQ(store.opened_version(), 0);
        EXPECT_EQ(store.schema_version(), latest_schema_version());
        EXPECT_EQ(store.connection().integer("PRAGMA application_id"), kTuningDbApplicationId);
        auto q = store.connection().query("PRAGMA journal_mode");
        ASSERT_TRUE(q.step());
        EXPECT_EQ(q.text(0), "wal");
    }
    TuningStore again(path, OpenMode::ReadOnly);
    EXPECT_EQ(again.opened_version(), latest_schema_version());
    for (const char* view : {"winners_summary", "measurements_summary", "misses_summary", "binaries_summary"})
        EXPECT_EQ(again.connection().integer(std::string("SELECT count(*) FROM sqlite_master WHERE name = '") + view + "'"), 1)
            << view;
}

// For each earlier version v: a file migrated to v only, holding a device row, opens at
// the latest version with the row kept and every later object present.
TEST(Schema, EveryEarlierVersionIsUpgradedKeepingItsRows) {
    for (int v = 0; v < latest_schema_version(); ++v) {
        SCOPED_TRACE("from version " + std::to_string(v));
        TempDir dir;
        const DeviceFingerprint device = h200();
        const std::string path = file_of_version(dir, v, device);
        EXPECT_EQ(user_version(path), v);
        TuningStore store(path);
        EXPECT_EQ(store.opened_version(), v);
        EXPECT_EQ(store.schema_version(), latest_schema_version());
        if (v >= 1) {
            ASSERT_EQ(store.devices().size(), 1u);
            EXPECT_EQ(store.devices()[0].gpu_name, "NVIDIA H200");
        }
        store.put_winner(winner(store.add_device(device), shape(1, 64, 64), 0.5, nullptr));
        EXPECT_EQ(store.connection().integer("SELECT count(*) FROM winners_summary"), 1);
    }
}

// A reader (dispatch, sgemm-db's reading commands, a merge's source) of a file of each
// earlier version reads a copy brought to the latest version: its rows are there, nothing of
// it can be written, and the file keeps its version with nothing left beside it.
TEST(Schema, AnOlderFileIsReadFromAnUpgradedCopyAndLeftAsItIs) {
    for (int v = 1; v < latest_schema_version(); ++v) {
        SCOPED_TRACE("from version " + std::to_string(v));
        TempDir dir;
        const DeviceFingerprint device = h200();
        const std::string path = file_of_version(dir, v, device);
        {
            // A row for the merge to bring, and its device with it: a miss, as that version
            // wrote one (recorders came with version 3).
            sqlite::Connection db(path, sqlite::Access::ReadWrite, std::chrono::milliseconds(1000));
            db.query(std::string("INSERT INTO misses (device_id, m, n, k, trans_a, trans_b, precision, alignment, "
                                 "count, first_seen, last_seen") +
                     (v >= 3 ? ", recorder" : "") + ") VALUES (?1, 8, 64, 64, 0, 0, 'fp32', 16, 2, '', ''" +
                     (v >= 3 ? ", 'older'" : "") + ")")
                .bind(1, device.id())
                .run();
        }
        {
            TuningStore source(path, OpenMode::ReadOnly);
            EXPECT_EQ(source.opened_version(), v);
            EXPECT_EQ(source.schema_version(), latest_schema_version());
            EXPECT_THROW(source.add_device(h200()), DbError) << "the copy refuses writes, as a reader's";
            TuningStore ours(dir.file("ours.db"));
            const MergeSummary merged = merge_store(ours, source);
            EXPECT_EQ(merged.devices_added, 1);
            EXPECT_EQ(merged.misses_merged, 1);
            EXPECT_EQ(ours.devices().at(0).id(), device.id());
        }
        EXPECT_EQ(user_version(path), v);
        EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
        EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
    }
    // A file of this build's schema is read in place.
    TempDir dir;
    const std::string path = write_sample(dir);
    EXPECT_EQ(TuningStore(path, OpenMode::ReadOnly).opened_version(), latest_schema_version());
}

// An older sgemm still at work on its file (or one that crashed) holds its last commits in
// the -wal file: a reader who may write the file reads them too, as it would read a file of
// this build's schema in place.
TEST(Schema, AnOlderFilesCommitsInItsWalAreRead) {
    TempDir dir;
    const std::string path = file_of_version(dir, latest_schema_version() - 1, h200());
    {
        sqlite::Connection older_writer(path, sqlite::Access::ReadWrite, std::chrono::milliseconds(1000));
        older_writer.exec("PRAGMA wal_autocheckpoint = 0");
        insert_device(older_writer, h200(1));
        ASSERT_GT(std::filesystem::file_size(path + "-wal"), 0u) << "the commit is in the -wal file";
        for (OpenMode mode : {OpenMode::ReadOnly, OpenMode::Trial}) {
            TuningStore reader(path, mode);
            EXPECT_EQ(reader.opened_version(), latest_schema_version() - 1);
            EXPECT_EQ(reader.devices().size(), 2u) << "the device committed to the -wal file is missing";
        }
    }
    // Read once the writer has closed, and so moved its -wal file into the file: an upgrade
    // by a reader would show.
    EXPECT_EQ(user_version(path), latest_schema_version() - 1);
}

// A trial of an older file is a copy brought to this schema that takes writes, which the
// file never sees.
TEST(Schema, ATrialOfAnOlderFileIsAnUpgradedCopyThatTakesWrites) {
    TempDir dir;
    const std::string path = file_of_version(dir, latest_schema_version() - 1, h200());
    const std::string before = bytes_of(path);
    {
        TuningStore trial(path, OpenMode::Trial);
        EXPECT_EQ(trial.opened_version(), latest_schema_version() - 1);
        EXPECT_EQ(trial.schema_version(), latest_schema_version());
        ASSERT_EQ(trial.devices().size(), 1u);
        trial.put_winner(winner(trial.add_device(h200(1)), shape(1, 64, 64), 0.5, nullptr));
        EXPECT_EQ(trial.devices().size(), 2u);
    }
    EXPECT_EQ(bytes_of(path), before);
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

// A database deployed where its reader may write neither it nor its folder (an image's
// read-only files) and left at the schema before this build's: read all the same. The tests
// run as root in CI, so the child drops to 'nobody'.
TEST(Schema, AnOlderFileItsReaderMayNotWriteIsRead) {
    TempDir dir;
    const DeviceFingerprint device = h200();
    const std::string path = file_of_version(dir, latest_schema_version() - 1, device);
    namespace fs = std::filesystem;
    fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
    const int child = in_child([&] {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) throw Error("cannot drop root");
        TuningStore store(path, OpenMode::ReadOnly);
        if (store.opened_version() != latest_schema_version() - 1 || store.devices().size() != 1)
            throw Error("read version " + std::to_string(store.opened_version()) + " with " +
                        std::to_string(store.devices().size()) + " devices");
    });
    EXPECT_EQ(child, 0) << "the child's check (its stderr says why)";
    EXPECT_EQ(user_version(path), latest_schema_version() - 1);
    fs::permissions(dir.path(), fs::perms::owner_all);
}

// Version 3 keeps misses per recorder: the counts of a version-2 file survive the upgrade,
// each row with a recorder of its own.
TEST(Schema, MissesFromBeforeRecordersKeepTheirCounts) {
    TempDir dir;
    const std::string path = dir.file("v2.db");
    const DeviceFingerprint device = h200();
    {
        sqlite::Connection db(path, sqlite::Access::ReadWrite, std::chrono::milliseconds(1000));
        migrate(db, 2);
        insert_device(db, device);
        for (int m : {3, 5})
            db.query("INSERT INTO misses VALUES (?1, ?2, 64, 64, 0, 0, 'fp32', 16, ?3, '2026-01-01', '2026-01-02')")
                .bind_all(device.id(), m, 2 * m)
                .run();
    }
    std::filesystem::copy_file(path, dir.file("v2-copy-source.db"));
    TuningStore store(path);
    const std::vector<Miss> misses = store.misses(device.id());
    ASSERT_EQ(misses.size(), 2u);
    EXPECT_EQ(misses[0].count, 10);
    EXPECT_EQ(misses[1].count, 6);
    EXPECT_EQ(misses[1].first_seen, "2026-01-01");
    const std::vector<Miss> rows = store.misses_by_recorder();
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_FALSE(rows[0].recorder.empty());
    EXPECT_NE(rows[0].recorder, rows[1].recorder);

    // A copy of the version-2 file, upgraded on its own, names its rows alike: merged into
    // the first, it adds nothing.
    std::filesystem::copy_file(dir.file("v2-copy-source.db"), dir.file("v2-copy.db"));
    TuningStore copy(dir.file("v2-copy.db"));
    EXPECT_EQ(merge_store(store, copy).misses_merged, 0);
    EXPECT_EQ(store.misses(device.id())[0].count, 10);
}

TEST(Schema, ANewerSchemaIsRefusedAndTheFileLeftAsItWas) {
    TempDir dir;
    const std::string path = write_sample(dir);
    sqlite::Connection(path, sqlite::Access::ReadWrite, std::chrono::milliseconds(0))
        .exec("PRAGMA user_version = " + std::to_string(latest_schema_version() + 1));
    expect_every_open_refused(path, "newer than this build");
    EXPECT_EQ(user_version(path), latest_schema_version() + 1);
}

// An empty SQLite file of another program that set a user_version: taken for an empty file,
// it was stamped with this schema's version after its later migrations alone, and every
// later open failed on tables that were never made.
TEST(Schema, AnEmptyFileWithAUserVersionIsNotTakenForATuningDatabase) {
    TempDir dir;
    const std::string path = dir.file("v1.db");
    sqlite::Connection(path, sqlite::Access::ReadWrite, std::chrono::milliseconds(0)).exec("PRAGMA user_version = 1");
    expect_every_open_refused(path, "user_version 1 and nothing in it: not a tuning database");
    EXPECT_EQ(user_version(path), 1);
}

// A file stamped with the latest version whose schema was changed outside sgemm (a table
// dropped, a column renamed, in the sqlite3 shell): every query on the missing part would
// fail with SQLite's words and its statement. The open names the part instead, and changes
// nothing.
TEST(Schema, AFileOfTheLatestVersionMissingATableOrAColumnIsRefusedByName) {
    TempDir dir;
    const std::string no_table = write_sample(dir, "no_table.db"), renamed = write_sample(dir, "renamed.db");
    sqlite::Connection(no_table, sqlite::Access::ReadWrite, std::chrono::milliseconds(0)).exec("DROP TABLE winners");
    expect_every_open_refused(no_table, "has schema version " + std::to_string(latest_schema_version()) +
                                            ", but its table winners is missing: the schema was changed outside "
                                            "sgemm or damaged");
    sqlite::Connection(renamed, sqlite::Access::ReadWrite, std::chrono::milliseconds(0))
        .exec("ALTER TABLE devices RENAME COLUMN gpu_name TO gpu");
    expect_every_open_refused(renamed, "its column gpu_name of table devices is missing");
    // Columns, tables and views of its own are no damage, even a view broken since.
    const std::string added = write_sample(dir, "added.db");
    sqlite::Connection(added, sqlite::Access::ReadWrite, std::chrono::milliseconds(0))
        .exec("ALTER TABLE devices ADD COLUMN note TEXT; CREATE TABLE notes (text TEXT); "
              "CREATE VIEW noted AS SELECT text FROM notes; DROP TABLE notes");
    EXPECT_EQ(TuningStore(added, OpenMode::ReadOnly).winners().size(), 4u);
}

// Our stamp and tables with the version reset to 0: taken at its word, the first migration
// would make the tables again, and fail on SQLite's words.
TEST(Schema, ATuningDatabaseWhoseVersionWasResetIsRefused) {
    TempDir dir;
    const std::string path = write_sample(dir);
    sqlite::Connection(path, sqlite::Access::ReadWrite, std::chrono::milliseconds(0)).exec("PRAGMA user_version = 0");
    expect_every_open_refused(path, "is a tuning database with schema version 0, though it holds");
}

// A file of the latest schema stamped with an earlier version, by hand or by a tool that
// copied the header: each later migration makes what the file already holds, and its
// failure reached the user as SQLite's words and the migration's statement. The open names
// the version that does not fit and the migration that failed, and changes nothing, for every earlier
// version: a writer's upgrade and a reader's upgraded copy alike.
TEST(Schema, AFileStampedWithAnEarlierVersionThanItsSchemaIsRefused) {
    for (int v = 1; v < latest_schema_version(); ++v) {
        SCOPED_TRACE("stamped " + std::to_string(v));
        TempDir dir;
        const std::string path = write_sample(dir);
        sqlite::Connection(path, sqlite::Access::ReadWrite, std::chrono::milliseconds(0))
            .exec("PRAGMA user_version = " + std::to_string(v));
        // The first later migration that makes something the file holds fails: not always
        // the next one (0003 rebuilds the misses table, which passes on a later schema).
        expect_every_open_refused(path, "has schema version " + std::to_string(v) +
                                            ", but upgrading it failed at migration 000");
        expect_every_open_refused(path, "): its schema does not fit its version (changed outside sgemm, or "
                                        "damaged); it was left untouched");
        try {
            TuningStore store(path);
        } catch (const DbError& e) {
            EXPECT_EQ(std::string(e.what()).find("while running"), std::string::npos) << e.what();
        }
        EXPECT_EQ(user_version(path), v);
    }
}
