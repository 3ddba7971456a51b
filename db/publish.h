// A new database appears whole or not at all. Made in place, its file exists from SQLite's
// first write on, so a write that failed after it (a full disk) left a file of SQLite's header
// page alone, or of an empty schema, where the user was told the write failed. Removing such a
// file afterwards is not safe: another process may have opened it meanwhile, and in WAL mode
// SQLite would let that process commit to the removed file and lose the commits unseen.
#pragma once
#include <string>

#include "db/sqlite.h"

namespace sgemm {

// Writes the database of `source` (one in memory: a trial's, or a new schema) to the new file
// `path`, whole: into a file of another name beside it, synced, then hard-linked to `path`,
// which fails rather than replace a file there. Returns false, leaving nothing, where `path` is
// taken by then (another process made the file), is a symbolic link (to no file yet), or its
// file system has no hard links: the caller makes the file in place then. A write that fails
// (a full disk) leaves nothing either, and throws a DbError that says so. `path`'s folder must
// exist.
bool publish_new_database(sqlite::Connection& source, const std::string& path);

}  // namespace sgemm
