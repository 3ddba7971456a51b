// A new database's file appears whole or not at all. Made in place, it exists from SQLite's
// first write on, so a write that failed after it (a full disk) left a file of SQLite's header
// page alone where the user was told the write failed, which tools call an empty database.
// Removing such a file afterwards is not safe: another process may have opened it meanwhile,
// and in WAL mode SQLite would let that process commit to the removed file and lose the
// commits unseen.
#pragma once
#include <chrono>
#include <functional>
#include <string>

#include "db/sqlite.h"

namespace sgemm {

// A new database that publish_new_database put at its path, whose folder then failed to sync:
// the file is there, with all it was given, but a power cut may lose its name.
struct UnsyncedNewDatabase : DbError {
    using DbError::DbError;
};

// Writes the database of `source` (one in memory: a trial's, or a new schema) to the new file
// `path`, whole, in WAL mode: into a file of another name beside it, synced, then hard-linked
// to `path`, which fails rather than replace a file there, and the folder synced. Returns
// false, having written nothing, where `path` is taken by then (another process made the
// file), is a symbolic link (to no file yet), or its file system has no hard links: the caller
// makes the file in place then. Any other failure (a full disk) throws a DbError that says no
// database was made, and leaves nothing, but for the rare failure to sync the folder after
// the link, which says the database is there (UnsyncedNewDatabase). `path`'s folder must
// exist. It first removes
// what killed publishers left beside `path` (remove_abandoned_incomplete_files).
// `before_copy`, where given, runs once the file under the other name exists, empty, just
// before `source` is copied into it, and is given that file's path: for a write into `source`
// whose rows name the file they go to by its identity (device, inode, birth time), which the
// link keeps, as a miss recorder's writer does (src/dispatch/miss_log.h). An sgemm::Error it
// throws goes to the caller as one of the same kind that adds "; so no database was made at
// PATH", and nothing is made.
bool publish_new_database(sqlite::Connection& source, const std::string& path,
                          const std::function<void(const std::string& file)>& before_copy = {});

// Removes the files that publishers killed while writing left beside `path`
// ("PATH.incomplete-" and 16 hex digits, and SQLite's "-journal", "-wal" and "-shm" of them):
// the regular files of those names last written `age` ago or earlier. A living publisher
// links its file within seconds of its last write, so age tells the two apart without a lock
// (one on NFS or CIFS would meet SQLite's own). The age is this machine's clock against the
// time the file system stamped: a clock an hour off the file server's, or a publisher stopped
// for an hour (SIGSTOP, a suspended VM), may lose a living publisher its file; the publisher
// then fails, saying no database was made, and publishes nothing. Failures to look or to
// remove are ignored: the files are litter, not data. A negative age removes nothing.
void remove_abandoned_incomplete_files(const std::string& path, std::chrono::seconds age = std::chrono::hours(1));

// remove_abandoned_incomplete_files, at the first call for `path` in this process only: for a
// writer's open of a database that is there, which a process may repeat every few seconds.
void remove_abandoned_incomplete_files_once(const std::string& path);

}  // namespace sgemm
