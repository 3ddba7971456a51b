// The schema: the migrations in db/migrations/ (embedded at build time), the version
// bookkeeping (PRAGMA user_version is the number of the last migration applied) and the
// checks that a file is a tuning database this build can read.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "db/sqlite.h"

namespace sgemm {

// PRAGMA application_id of every tuning database ("SGMM"): tells ours from other SQLite files.
constexpr std::int32_t kTuningDbApplicationId = 0x53474d4d;

struct Migration {
    int version;       // from the file name: 0002_views.sql is version 2
    std::string name;  // the file name
    std::string sql;
};

// The migrations, in order; their versions are 1, 2, ... with no gaps.
const std::vector<Migration>& migrations();
int latest_schema_version();

// What a writer that opened `path` at schema version `was` says of it: that it upgraded the
// file, which builds older than this one no longer read; "" where it upgraded nothing (a new
// file, or one of this version).
std::string upgrade_notice(const std::string& path, int was);

// Another program's SQLite database, or one with its stamp and nothing in it: whole, and
// not ours.
struct NotATuningDatabaseError : DbError {
    using DbError::DbError;
};

// An empty file, or an SQLite file with nothing in it yet (a writer that died before its first
// migration), opened by a reader: no tuning database yet.
struct EmptyDatabaseError : DbError {
    using DbError::DbError;
};

// A file whose schema is older than this build's, opened by a reader who may not upgrade it:
// the store then reads an upgraded copy (OpenMode::ReadOnly).
struct OlderSchemaError : DbError {
    using DbError::DbError;
};

// Refuses, with a DbError that says why, a file that is not a tuning database (an empty
// file is one, to be created), one whose schema is newer than this build, and, when not
// `writable`, one whose schema is older. When `writable`, switches the file to WAL and
// brings it to the latest version. Returns the version the file had.
int prepare_schema(sqlite::Connection& db, bool writable);
// prepare_schema's checks alone: changes nothing. Returns the version the file has.
int check_schema(sqlite::Connection& db, bool writable);
// For a copy in memory of a file (sqlite::Access::Copy), or an empty database in memory: the
// checks of a writer, then the copy, not the file, brought to the latest version. Returns the
// version the file had.
int prepare_schema_of_copy(sqlite::Connection& copy);

// Applies the migrations after the file's version up to `version`, in one transaction.
// prepare_schema uses it with the latest version; tests use it to build older files.
void migrate(sqlite::Connection& db, int version);

}  // namespace sgemm
