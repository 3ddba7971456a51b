// Bad input gets a clear error and loses nothing: each case of issue 3 on a real file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "db/schema.h"
#include "db/store.h"
#include "db/verify.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using namespace sgemm::testing;
namespace fs = std::filesystem;

namespace {

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

// The message of the DbError that `body` throws; fails the test when it throws none.
std::string db_error_of(const std::function<void()>& body) {
    try {
        body();
    } catch (const DbError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no DbError";
    return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs `body` in a child process without root's power to ignore file permissions (as
// 'nobody' when the tests run as root); returns its exit status.
int as_unprivileged(const std::function<void()>& body) {
    return in_child([&] {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) throw Error("cannot drop root");
        body();
    });
}

// Lets this process's files grow to `bytes` at most, as on a nearly full disk: a write past
// that fails with EFBIG, rather than SIGXFSZ ending the process. For a child process.
void limit_file_size(rlim_t bytes) {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{bytes, bytes};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) throw Error("cannot limit the file size");
}

// In a child: throws unless `write` fails with a DbError whose message holds `said`.
void expect_failed_write(const std::function<void()>& write, const std::string& said) {
    try {
        write();
    } catch (const DbError& e) {
        if (!contains(e.what(), said)) throw Error("did not say \"" + said + "\": " + e.what());
        return;
    }
    throw Error("a write past the file size limit succeeded");
}

// Lets everyone read and enter `folder`, and no one but root write it.
void make_folder_read_only(const std::string& folder) {
    fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
}

// As a user who may not write the folder of the sample database at `path`: opening it to
// write is refused, naming the folder, and it reads whole (SQLite cannot create the -shm file
// WAL readers share there: it is read from a copy). The child's exit status.
int refused_for_writing_but_readable(const std::string& path) {
    return as_unprivileged([&] {
        const std::string message = db_error_of([&] { TuningStore store(path); });
        if (!contains(message, "is not writable")) throw Error("unexpected: " + message);
        TuningStore reader(path, OpenMode::ReadOnly);
        if (reader.winners().size() != 4) throw Error(path + " reads wrong");
    });
}

}  // namespace

TEST(BadInput, AFileThatIsNotSqliteIsRefusedAndKept) {
    TempDir dir;
    const std::string path = dir.file("notes.db");
    const std::string text = "M,N,K\n8,4096,4096\nthese are not the pages of a database, but they are long enough\n";
    write_file(path, text);
    for (OpenMode mode : {OpenMode::ReadWrite, OpenMode::ReadOnly}) {
        const std::string message = db_error_of([&] { TuningStore store(path, mode); });
        EXPECT_TRUE(contains(message, "is not an SQLite database")) << message;
        EXPECT_TRUE(contains(message, path)) << message;
    }
    EXPECT_EQ(bytes_of(path), text);
}

TEST(BadInput, ASqliteFileOfSomethingElseIsRefusedAndKept) {
    TempDir dir;
    const std::string path = dir.file("other.db");
    {
        sqlite::Connection db(path, sqlite::Access::ReadWrite, std::chrono::milliseconds(0));
        db.exec("CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('bread')");
    }
    const std::string before = bytes_of(path);
    const std::string message = db_error_of([&] { TuningStore store(path); });
    EXPECT_TRUE(contains(message, "not a tuning database")) << message;
    EXPECT_EQ(bytes_of(path), before);
}

TEST(BadInput, ATruncatedFileIsReportedCorruptAndNotChanged) {
    TempDir dir;
    const std::string path = write_sample(dir, "t.db");
    const std::string whole = bytes_of(path);
    ASSERT_GT(whole.size(), 8192u);
    const std::string truncated = whole.substr(0, whole.size() / 2);
    write_file(path, truncated);
    const std::string message = db_error_of([&] {
        TuningStore store(path);
        store.winners_with_binaries(store.devices().at(0).id());
        store.measurements();
        if (!verify_store(store).ok()) throw DbError("verify found the damage");
    });
    EXPECT_TRUE(contains(message, "corrupt") || contains(message, "damage")) << message;
    EXPECT_EQ(bytes_of(path), truncated);
}

// A write the system refuses (a full disk, a limit on file size) names what limits writes
// there, not SQLite's "disk I/O error" alone, and the file keeps what was committed before.
TEST(BadInput, AWriteTheSystemRefusesNamesWhatLimitsWrites) {
    TempDir dir;
    const std::string path = dir.file("limited.db");
    TuningStore(path).add_device(h200());
    const int status = in_child([&] {
        TuningStore store(path);
        limit_file_size(8192);  // its -wal file is larger already: the file may grow no further
        const auto fill = [&] { fill_sample(store); };
        expect_failed_write(fill, "bytes free to users other than root (quotas not counted)");
        expect_failed_write(fill, "may write files of 8192 bytes at most (ulimit -f)");
    });
    EXPECT_EQ(status, 0);
    TuningStore store(path, OpenMode::ReadOnly);
    EXPECT_EQ(store.devices().size(), 1u);
    EXPECT_TRUE(store.winners().empty());
    EXPECT_TRUE(verify_store(store).ok());
}

// A new database is made whole or not at all (db/publish.h): a write the system refuses leaves
// no file, where one made in place stayed with SQLite's header page alone, which tools call an
// empty database though the user was told the write failed.
TEST(BadInput, ANewDatabaseIsMadeWholeOrNotAtAll) {
    TempDir dir;
    // A writer's open: the new schema.
    const std::string opened = dir.file("opened.db");
    EXPECT_EQ(in_child([&] {
                  limit_file_size(8192);
                  expect_failed_write([&] { TuningStore store(opened); }, "; so no database was made at " + opened);
              }),
              0);
    // A trial's content (an import's into no database).
    const std::string imported = dir.file("imported.db");
    EXPECT_EQ(in_child([&] {
                  TuningStore trial(imported, OpenMode::Trial);
                  fill_sample(trial);
                  limit_file_size(8192);
                  expect_failed_write([&] { trial.publish_as_new_file(imported); },
                                      "; so no database was made at " + imported);
              }),
              0);
    EXPECT_EQ(listing(dir.path()), "");
    // With room, the trial is the file, in WAL mode as a writer leaves one, and no other file is
    // left beside it.
    TuningStore trial(imported, OpenMode::Trial);
    fill_sample(trial);
    EXPECT_TRUE(trial.publish_as_new_file(imported));
    EXPECT_EQ(listing(dir.path()), "imported.db\n");
    {
        sqlite::Connection file(imported, sqlite::Access::QueryOnly, std::chrono::milliseconds(0));
        auto mode = file.query("PRAGMA journal_mode");
        ASSERT_TRUE(mode.step());
        EXPECT_EQ(mode.text(0), "wal");
        TuningStore store(imported, OpenMode::ReadOnly);
        EXPECT_EQ(store.opened_version(), latest_schema_version());
        EXPECT_EQ(store.winners().size(), trial.winners().size());
        EXPECT_TRUE(verify_store(store).ok());
    }
    // A name that means something in an SQLite URI is written as named.
    const std::string odd = dir.file("odd?name#1%.db");
    EXPECT_TRUE(trial.publish_as_new_file(odd));
    EXPECT_EQ(listing(dir.path()), "imported.db\nodd?name#1%.db\n");
    EXPECT_EQ(TuningStore(odd, OpenMode::ReadOnly).winners().size(), trial.winners().size());
    // A file there by now is not replaced: the change goes to the file opened for writing.
    const std::string before = bytes_of(imported);
    TuningStore other(imported, OpenMode::Trial);
    EXPECT_FALSE(other.publish_as_new_file(imported));
    EXPECT_EQ(bytes_of(imported), before);
    // Nor is a symbolic link to no file yet, which a writer's open makes the file through.
    const std::string link = dir.file("link.db");
    fs::create_symlink(dir.file("target.db"), link);
    EXPECT_FALSE(other.publish_as_new_file(link));
    EXPECT_FALSE(fs::exists(dir.file("target.db")));
    TuningStore(link).add_device(h200());
    EXPECT_EQ(TuningStore(dir.file("target.db"), OpenMode::ReadOnly).devices().size(), 1u);
}

// A step that a publish runs before its copy (publish_new_database's before_copy) and that
// fails leaves nothing, and says no database was made, keeping its error's kind and code.
// One that works is given the file under the other name, beside the database, made and empty.
TEST(BadInput, APublishWhoseStepBeforeTheCopyFailsMakesNothing) {
    TempDir dir;
    const std::string path = dir.file("t.db");
    TuningStore trial(path, OpenMode::Trial);
    for (const bool database_error : {false, true}) {
        SCOPED_TRACE(database_error ? "DbError" : "Error");
        try {
            trial.publish_as_new_file(path, [&](const std::string&) {
                if (database_error) throw DbError("the step failed", SQLITE_FULL);
                throw Error("the step failed");
            });
            ADD_FAILURE() << "published";
        } catch (const DbError& e) {
            EXPECT_TRUE(database_error);
            EXPECT_EQ(e.code, SQLITE_FULL);
            EXPECT_EQ(std::string(e.what()), "the step failed; so no database was made at " + path);
        } catch (const Error& e) {
            EXPECT_FALSE(database_error);
            EXPECT_EQ(std::string(e.what()), "the step failed; so no database was made at " + path);
        }
        EXPECT_EQ(listing(dir.path()), "");
    }
    std::string given;
    EXPECT_TRUE(trial.publish_as_new_file(path, [&](const std::string& file) {
        given = file;
        EXPECT_EQ(fs::file_size(file), 0u);
    }));
    EXPECT_EQ(given.rfind(path + ".incomplete-", 0), 0u) << given;
    EXPECT_EQ(listing(dir.path()), "t.db\n");
}

// Writes `path` as last written `hours` ago.
void write_file_of_age(const std::string& path, int hours) {
    write_file(path, "written");
    fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(hours));
}

// A publisher killed while writing leaves its file under the other name (and SQLite's files
// beside it). A publish, and the first writer's open of a database that is there, remove such
// files once an hour old, and only those: not a younger one, whose publisher may be at work,
// nor a name that only looks alike, nor what is no regular file (a FIFO, whose open would
// block; a link).
TEST(BadInput, FilesThatKilledPublishersLeftAreSweptAnHourOn) {
    TempDir dir;
    const std::string db = dir.file("t.db");
    const std::string abandoned = db + ".incomplete-0123456789abcdef";
    write_file_of_age(abandoned, 2);
    write_file_of_age(abandoned + "-wal", 2);
    write_file_of_age(db + ".incomplete-fedcba9876543210-shm", 2);  // of a file removed already
    const std::string young = db + ".incomplete-00000000000000aa";
    write_file_of_age(young, 0);
    for (const std::string& name : {db + ".incomplete-0123", db + ".incomplete-0123456789abcdef.bak",
                                    db + ".incomplete-0123456789abcdeg", dir.file("u.db.incomplete-0123456789abcdef")})
        write_file_of_age(name, 2);
    ASSERT_EQ(::mkfifo((db + ".incomplete-00000000000000ff").c_str(), 0644), 0);
    fs::last_write_time(db + ".incomplete-00000000000000ff", fs::file_time_type::clock::now() - std::chrono::hours(2));
    write_file_of_age(dir.file("target"), 2);
    fs::create_symlink(dir.file("target"), db + ".incomplete-00000000000000ee");

    const std::string kept =
        "t.db.incomplete-0123\n"
        "t.db.incomplete-0123456789abcdef.bak\n"
        "t.db.incomplete-0123456789abcdeg\n"
        "target\n"
        "u.db.incomplete-0123456789abcdef\n";
    // A new database is published: the files an hour old go.
    { TuningStore store(db); }
    EXPECT_EQ(listing(dir.path()), "t.db\nt.db.incomplete-00000000000000aa\nt.db.incomplete-00000000000000ee\n"
                                   "t.db.incomplete-00000000000000ff\n" + kept);
    // An hour on, this process's first writer of the database that is there removes the young one.
    fs::last_write_time(young, fs::file_time_type::clock::now() - std::chrono::hours(2));
    TuningStore(db).add_device(h200());
    EXPECT_EQ(listing(dir.path()), "t.db\nt.db.incomplete-00000000000000ee\nt.db.incomplete-00000000000000ff\n" + kept);
    // Its later writers, which a miss log opens every few seconds, do not look again.
    write_file_of_age(abandoned, 2);
    TuningStore(db).add_device(h200(1));
    EXPECT_TRUE(fs::exists(abandoned));
    EXPECT_EQ(TuningStore(db, OpenMode::ReadOnly).devices().size(), 2u);
}

// The open that switches a publisher's file to WAL mode (db/publish.cpp) fails on a file that
// is gone (a sweep took it) rather than make an empty one there, which the link would publish.
TEST(BadInput, AWriterOfAFileThatMustBeThereMakesNone) {
    TempDir dir;
    const std::string gone = dir.file("gone.db");
    EXPECT_THROW(sqlite::Connection(gone, sqlite::Access::ReadWriteExisting, std::chrono::milliseconds(0)), DbError);
    EXPECT_EQ(listing(dir.path()), "");
    // A file that is there is written as by ReadWrite.
    write_sample(dir, "there.db");
    sqlite::Connection there(dir.file("there.db"), sqlite::Access::ReadWriteExisting, std::chrono::milliseconds(0));
    there.exec("CREATE TABLE written (x)");
    EXPECT_EQ(there.integer("SELECT count(*) FROM sqlite_master WHERE name = 'written'"), 1);
}

TEST(BadInput, ACorruptPageIsFoundByVerify) {
    TempDir dir;
    const std::string path = write_sample(dir, "t.db");
    std::string bytes = bytes_of(path);
    const std::size_t page = 4096;  // SQLite's default page size
    ASSERT_GT(bytes.size(), 4 * page);
    // Scribble over the b-tree header at the start of every page but the first.
    for (std::size_t p = page; p < bytes.size(); p += page)
        for (std::size_t i = p; i < p + 64; ++i) bytes[i] = static_cast<char>(i * 7);
    write_file(path, bytes);
    bool found = false;
    try {
        TuningStore store(path, OpenMode::ReadOnly);
        found = !verify_store(store).ok();
    } catch (const DbError& e) {
        found = contains(e.what(), "corrupt");
    }
    EXPECT_TRUE(found);
    EXPECT_EQ(bytes_of(path), bytes);
}

TEST(BadInput, AReadOnlyFileIsRefusedForWritingAndStillReadable) {
    TempDir dir;
    const std::string path = write_sample(dir, "t.db");
    const std::string before = bytes_of(path);
    fs::permissions(dir.path(), fs::perms::all);  // the folder is writable by anyone
    fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    EXPECT_EQ(as_unprivileged([&] {
                  const std::string message = db_error_of([&] { TuningStore store(path); });
                  if (!contains(message, "the file is read-only")) throw Error("unexpected: " + message);
                  TuningStore reader(path, OpenMode::ReadOnly);
                  if (reader.winners().size() != 4) throw Error("the read-only file reads wrong");
              }),
              0);
    EXPECT_EQ(bytes_of(path), before);
}

TEST(BadInput, AReadOnlyFolderIsRefusedForWritingAndStillReadable) {
    TempDir dir;
    const std::string path = write_sample(dir, "t.db");
    fs::permissions(path, fs::perms::all);
    make_folder_read_only(dir.path());
    EXPECT_EQ(refused_for_writing_but_readable(path), 0);
}

// The folder's owner may write the database while a reader who may not write the folder
// reads it: such a reader reads a copy taken whole, not the file's pages as they change. Read
// in place without locks, it saw pages a checkpoint was writing and called the file corrupt.
TEST(BadInput, AReaderInAReadOnlyFolderReadsACopyTheFilesWritersCannotTear) {
    TempDir dir;
    const std::string path = write_sample(dir, "t.db");
    fs::permissions(path, fs::perms::all);
    make_folder_read_only(dir.path());
    const std::string before = bytes_of(path);
    EXPECT_EQ(as_unprivileged([&] {
                  TuningStore reader(path, OpenMode::ReadOnly);
                  write_file(path, std::string(before.size(), '\0'));  // every page rewritten after the open
                  if (reader.winners().size() != 4) throw Error("the reader read the file's pages as they changed");
              }),
              0);
}

// What a folder allows is judged at the file a symbolic link leads to, where SQLite keeps
// its -wal and -shm files: judged at the link, a reader was refused with "attempt to write
// a readonly database" and a writer was not told the folder was at fault.
TEST(BadInput, ALinkToAFileInAReadOnlyFolderIsJudgedByThatFolder) {
    TempDir dir;
    fs::create_directory(dir.file("target"));
    fs::create_directory(dir.file("links"));
    const std::string path = write_sample(dir, "target/t.db"), link = dir.file("links/t.db");
    fs::create_symlink(path, link);
    fs::permissions(path, fs::perms::all);
    fs::permissions(dir.file("links"), fs::perms::all);
    fs::permissions(dir.path(), fs::perms::all);
    make_folder_read_only(dir.file("target"));
    EXPECT_EQ(refused_for_writing_but_readable(link), 0);
}

// A reader who may not write the file reads a copy (the backup API): its errors name the
// cause, as the owner's do, where they used to say "not an error".
TEST(BadInput, AReaderWhoMayNotWriteAJunkOrCutFileIsToldWhy) {
    TempDir dir;
    const std::string junk = dir.file("junk.db"), cut = write_sample(dir, "cut.db");
    write_file(junk, std::string(8192, 'x'));
    const std::string whole = bytes_of(cut);
    write_file(cut, whole.substr(0, whole.size() / 2));
    for (const std::string& path : {junk, cut}) fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::permissions(dir.path(), fs::perms::all);
    EXPECT_EQ(as_unprivileged([&] {
                  for (const std::string& path : {junk, cut}) {
                      const std::string message = db_error_of([&] { TuningStore store(path, OpenMode::ReadOnly); });
                      if (contains(message, "not an error") || !contains(message, path))
                          throw Error("unexpected: " + message);
                  }
                  const std::string message = db_error_of([&] { TuningStore store(junk, OpenMode::ReadOnly); });
                  if (!contains(message, "is not an SQLite database (file is not a database)"))
                      throw Error("unexpected: " + message);
              }),
              0);
}

// A database made in place (in an empty file that was there: a missing one is made whole, with
// its schema) has its first commits in its -wal file until the writer checkpoints; a reader
// who may not write the file reads it without them, and is told so rather than "empty".
TEST(BadInput, AReaderWhoMayNotWriteANewDatabaseIsToldItsCommitsAreInTheWal) {
    TempDir dir;
    fs::permissions(dir.path(), fs::perms::all);
    const std::string path = dir.file("new.db");
    write_file(path, "");
    TuningStore writer(path);
    writer.add_device(h200());
    ASSERT_GT(fs::file_size(path + "-wal"), 0u);
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    EXPECT_EQ(as_unprivileged([&] {
                  const std::string message = db_error_of([&] { TuningStore store(path, OpenMode::ReadOnly); });
                  if (!contains(message, "its -wal file holds commits")) throw Error("unexpected: " + message);
              }),
              0);
}

// A database this user cannot reach, behind a folder they may not enter, or cannot read, is
// said to be so: it was "no tuning database at ...", with the advice to write one.
TEST(BadInput, ADatabaseThisUserCannotReachOrReadIsNotCalledMissing) {
    TempDir dir;
    fs::permissions(dir.path(), fs::perms::all);
    fs::create_directory(dir.file("private"));
    const std::string behind = write_sample(dir, "private/t.db");
    fs::permissions(dir.file("private"), fs::perms::owner_all);
    const std::string unreadable = write_sample(dir, "unreadable.db");
    fs::permissions(unreadable, fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(as_unprivileged([&] {
                  for (OpenMode mode : {OpenMode::ReadOnly, OpenMode::ReadWrite}) {
                      const std::string reach = db_error_of([&] { TuningStore store(behind, mode); });
                      if (!contains(reach, "cannot reach " + behind + ": Permission denied"))
                          throw Error("behind a closed folder: " + reach);
                      const std::string read = db_error_of([&] { TuningStore store(unreadable, mode); });
                      if (!contains(read, "cannot read " + unreadable + ": the file is not readable"))
                          throw Error("an unreadable file: " + read);
                  }
                  if (!contains(db_error_of([&] { check_writable_database(behind); }), "cannot reach"))
                      throw Error("the writer's check took the closed folder's file for a missing one");
              }),
              0);
}

TEST(BadInput, AMissingFileIsNotCreatedByAReader) {
    TempDir dir;
    const std::string message = db_error_of([&] { TuningStore store(dir.file("absent.db"), OpenMode::ReadOnly); });
    EXPECT_TRUE(contains(message, "no tuning database at")) << message;
    EXPECT_FALSE(fs::exists(dir.file("absent.db")));
}

// check_writable_database, which sgemm-tune runs when no GPU is visible: it refuses what a
// writer refuses, with the writer's message, and creates, upgrades and changes nothing.
TEST(BadInput, TheWritersChecksAloneSayWhatTheWriterWouldAndChangeNothing) {
    TempDir dir;
    const auto nothing_beside = [](const std::string& path) {
        return !fs::exists(path + "-wal") && !fs::exists(path + "-shm") && !fs::exists(path + "-journal");
    };
    // Refused, as the writer refuses them.
    const std::string junk = dir.file("junk.db");
    write_file(junk, "M,N,K\n8,4096,4096\nthese are not the pages of a database, but they are long enough\n");
    const std::string foreign = dir.file("foreign.db");
    sqlite::Connection(foreign, sqlite::Access::ReadWrite, std::chrono::milliseconds(0))
        .exec("CREATE TABLE recipes (name TEXT)");
    const std::string newer = write_sample(dir, "newer.db");
    sqlite::Connection(newer, sqlite::Access::ReadWrite, std::chrono::milliseconds(0))
        .exec("PRAGMA user_version = 1000");
    fs::create_directory(dir.file("folder.db"));
    write_file(dir.file("afile"), "a file where a folder should be");
    for (const std::string& path : {junk, foreign, newer, dir.file("folder.db"), dir.file("afile/tune.db")}) {
        const bool is_file = fs::is_regular_file(path);
        const std::string before = is_file ? bytes_of(path) : "";
        const std::string said = db_error_of([&] { check_writable_database(path); });
        EXPECT_FALSE(said.empty()) << path;
        if (is_file) {
            EXPECT_EQ(bytes_of(path), before) << path;
        }
        EXPECT_TRUE(nothing_beside(path)) << path;
        EXPECT_EQ(said, db_error_of([&] { TuningStore writer(path); })) << path;
    }
    // Taken, as the writer takes them, and left as they are: a missing file (and folder), an
    // empty file, an older schema, the current one.
    const std::string missing = dir.file("new/folder/tune.db");
    const std::string empty = dir.file("empty.db");
    write_file(empty, "");
    const std::string older = dir.file("older.db");
    {
        sqlite::Connection db(older, sqlite::Access::ReadWrite, std::chrono::milliseconds(0));
        migrate(db, 1);
    }
    const std::string current = write_sample(dir, "current.db");
    for (const std::string& path : {missing, empty, older, current}) {
        const std::string before = fs::exists(path) ? bytes_of(path) : "(none)";
        EXPECT_NO_THROW(check_writable_database(path)) << path;
        EXPECT_EQ(fs::exists(path) ? bytes_of(path) : "(none)", before) << path;
        EXPECT_TRUE(nothing_beside(path)) << path;
    }
    EXPECT_FALSE(fs::exists(dir.file("new")));
    // Relative paths, whose first folder may be missing: the writer creates it.
    const fs::path working = fs::current_path();
    fs::current_path(dir.path());
    EXPECT_NO_THROW(check_writable_database("fresh/folder/t.db"));
    EXPECT_NO_THROW(check_writable_database("here.db"));
    fs::current_path(working);
    EXPECT_FALSE(fs::exists(dir.file("fresh")));
    EXPECT_TRUE(contains(db_error_of([&] { check_writable_database(dir.file("afile/new/tune.db")); }),
                         dir.file("afile") + " is not a folder"));
    // A reader too is told so: the path is not found, yet it is no missing database.
    EXPECT_TRUE(contains(db_error_of([&] { TuningStore(dir.file("afile/"), OpenMode::ReadOnly); }),
                         "cannot reach " + dir.file("afile/") + ": " + dir.file("afile") + " is not a folder"));
    // Permissions, which root ignores, as another user.
    const std::string read_only = write_sample(dir, "read-only.db");
    fs::permissions(dir.path(), fs::perms::all);
    fs::permissions(read_only, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::create_directory(dir.file("shut"));
    make_folder_read_only(dir.file("shut"));
    // Another user's -wal file beside a database this user may write blocks the writer's
    // first write.
    const std::string shared = write_sample(dir, "shared.db");
    fs::permissions(shared, fs::perms::all);
    write_file(shared + "-wal", "");
    fs::permissions(shared + "-wal", fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
    EXPECT_EQ(as_unprivileged([&] {
                  for (const std::string& path : {read_only, dir.file("shut/tune.db"), dir.file("shut/new/tune.db")}) {
                      const std::string said = db_error_of([&] { check_writable_database(path); });
                      if (said.empty() || said != db_error_of([&] { TuningStore writer(path); }))
                          throw Error(path + ": the check said '" + said + "'");
                  }
                  const std::string said = db_error_of([&] { check_writable_database(shared); });
                  if (!contains(said, "SQLite's " + shared + "-wal beside it is not writable by this user"))
                      throw Error("another user's -wal file: the check said '" + said + "'");
              }),
              0);
}

// A writer that holds the lock longer than the busy timeout: the write waits that long,
// then fails saying the database is locked; with a longer timeout it waits and succeeds.
TEST(BadInput, ADatabaseLockedByALongWriterWaitsThenSaysSo) {
    using Clock = std::chrono::steady_clock;
    TempDir dir;
    const std::string path = dir.file("t.db");
    std::string id;
    {
        TuningStore store(path);
        id = store.add_device(h200());
    }
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const auto hold = std::chrono::milliseconds(1500);
    ChildProcess writer([&] {
        TuningStore store(path);
        sqlite::Transaction t(store.connection());
        store.record_measurement(measurement(id, shape(1, 2, 3), 1));
        if (write(ready[1], "x", 1) != 1) throw Error("pipe");
        std::this_thread::sleep_for(hold);
        t.commit();
    });
    close(ready[1]);  // so that the read below ends if the writer dies before it writes
    char byte = 0;
    ASSERT_EQ(read(ready[0], &byte, 1), 1);
    const auto locked_at = Clock::now();
    {
        TuningStore store(path, OpenMode::ReadWrite, std::chrono::milliseconds(200));  // opening needs no lock
        EXPECT_EQ(store.measurements().size(), 0u) << "readers see the last commit while a writer works";
        std::string message;
        try {
            store.record_measurement(measurement(id, shape(4, 5, 6), 1));
        } catch (const DbBusyError& e) {
            message = e.what();
        }
        const auto waited = Clock::now() - locked_at;
        EXPECT_TRUE(contains(message, "the database is locked")) << message;
        EXPECT_TRUE(contains(message, "200 ms")) << message;
        EXPECT_GE(waited, std::chrono::milliseconds(200));
        EXPECT_LT(waited, hold);
    }
    TuningStore patient(path, OpenMode::ReadWrite, std::chrono::milliseconds(10000));
    patient.record_measurement(measurement(id, shape(4, 5, 6), 1));
    EXPECT_GE(Clock::now() - locked_at, hold - std::chrono::milliseconds(100));
    EXPECT_EQ(writer.wait(), 0);
    EXPECT_EQ(patient.measurements().size(), 2u) << "both writes are there";
    close(ready[0]);
}
