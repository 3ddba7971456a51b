#include "db/schema.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "db/embedded_migrations.h"
#include "src/util/text.h"

namespace sgemm {

namespace {

// What the file's header and catalogue say, read in one statement so that it is one
// snapshot: another process may be creating the schema at the same moment.
struct FileState {
    std::int64_t application_id, version, objects;
};

FileState read_state(sqlite::Connection& db) {
    auto q = db.query("SELECT (SELECT application_id FROM pragma_application_id()), "
                      "(SELECT user_version FROM pragma_user_version()), (SELECT count(*) FROM sqlite_master)");
    q.step();
    return {q.integer(0), q.integer(1), q.integer(2)};
}

// A table or view by name, with the columns a table must have (generated ones too); a view's
// are left unchecked: reading them would compile the view.
struct SchemaObject {
    std::string type, name;
    std::vector<std::string> columns;
};

std::vector<std::string> table_columns(sqlite::Connection& db, const std::string& table) {
    std::vector<std::string> out;
    auto q = db.query("SELECT name FROM pragma_table_xinfo(?1)");
    for (q.bind(1, table); q.step();) out.push_back(q.text(0));
    return out;
}

// What a file of the latest version must hold: the objects the migrations make in an empty
// database, built once a process. Never destroyed, as migrations(): a dispatch handle that is
// not destroyed before exit leaves its miss writer running, and a write checks the schema
// while exit runs the static destructors (src/dispatch/miss_log.cpp).
const std::vector<SchemaObject>& latest_schema_objects() {
    static const std::vector<SchemaObject>& objects = *new std::vector<SchemaObject>([] {
        sqlite::Connection empty("the latest schema", sqlite::Access::Memory, std::chrono::milliseconds(0));
        for (const Migration& m : migrations()) empty.exec(m.sql);
        std::vector<SchemaObject> out;
        for (auto q = empty.query("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') "
                                  "AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY type, name");
             q.step();)
            out.push_back({q.text(0), q.text(1), {}});
        for (SchemaObject& o : out)
            if (o.type == "table") o.columns = table_columns(empty, o.name);
        return out;
    }());
    return objects;
}

// How a file that says it has the latest schema lacks part of it (a table dropped or a
// column renamed by hand, in another program), or "". Every query on the missing part would
// fail with SQLite's words and the statement: this names it once, at open. Only our own
// objects are looked at: a file may hold others, even broken ones.
std::string missing_from_schema(sqlite::Connection& db) {
    for (const SchemaObject& expected : latest_schema_objects()) {
        auto q = db.query("SELECT count(*) FROM sqlite_master WHERE type = ?1 AND name = ?2");
        q.bind(1, expected.type).bind(2, expected.name);
        if (!q.step() || q.integer(0) == 0) return expected.type + " " + expected.name + " is missing";
        if (expected.columns.empty()) continue;
        const std::vector<std::string> has = table_columns(db, expected.name);
        for (const std::string& column : expected.columns)
            if (std::find(has.begin(), has.end(), column) == has.end())
                return "column " + column + " of table " + expected.name + " is missing";
    }
    return "";
}

// Throws unless the file holds a tuning database that this build can use, or nothing yet.
void check(sqlite::Connection& db, const FileState& state, bool writable) {
    // Nothing in it, yet a user_version: another program's file (sgemm stamps its own
    // application_id with its first version). Taken as empty, it would be stamped and its
    // earlier migrations skipped.
    if (state.application_id == 0 && state.objects == 0 && state.version != 0)
        throw NotATuningDatabaseError(printable(db.path()) + " is an SQLite database with user_version " + std::to_string(state.version) +
                      " and nothing in it: not a tuning database; it was left untouched");
    if (state.application_id != kTuningDbApplicationId && !(state.application_id == 0 && state.objects == 0))
        throw NotATuningDatabaseError(printable(db.path()) + " is an SQLite database, but not a tuning database (application_id " +
                      std::to_string(state.application_id) + ", " + std::to_string(state.objects) +
                      " schema objects); it was left untouched");
    // Our stamp and tables, yet no version: the migrations would make the tables again.
    if (state.application_id == kTuningDbApplicationId && state.version == 0 && state.objects > 0)
        throw DbError(printable(db.path()) + " is a tuning database with schema version 0, though it holds " +
                      std::to_string(state.objects) + " schema objects: its version was reset outside sgemm or "
                      "damaged; it was left untouched");
    const int latest = latest_schema_version();
    if (state.version > latest)
        throw DbError(printable(db.path()) + " has schema version " + std::to_string(state.version) +
                      ", newer than this build of sgemm reads (" + std::to_string(latest) +
                      "): it was written by a newer sgemm, which reads it");
    // An empty file (SQLite reads it as an empty database) is not an old tuning database.
    if (!writable && state.objects == 0) {
        // A reader who may not write the file reads it without its -wal file, which holds a
        // new database's first commits until the writer checkpoints.
        std::error_code ec;
        if (std::filesystem::file_size(db.path() + "-wal", ec) > 0 && !ec)
            throw DbError(printable(db.path()) + " holds no tuning database yet, but its -wal file holds commits that readers "
                          "who may not write the file see once its writer checkpoints or ends (a tune still running?)");
        throw EmptyDatabaseError(printable(db.path()) + " is empty, not a tuning database: a tune, an import or a merge writes one "
                                 "there");
    }
    if (!writable && state.version < latest)
        throw OlderSchemaError(printable(db.path()) + " has schema version " + std::to_string(state.version) + ", older than this "
                               "build's " + std::to_string(latest));
    if (state.version == latest)
        if (const std::string missing = missing_from_schema(db); !missing.empty()) {
            // The objects were read after the version: a newer sgemm may have migrated the
            // file between the two, and is judged on the version it left.
            if (const FileState now = read_state(db); now.version != state.version) return check(db, now, writable);
            throw DbError(printable(db.path()) + " has schema version " + std::to_string(latest) + ", but its " + missing +
                          ": the schema was changed outside sgemm or damaged; it was left untouched");
        }
}

// WAL lets readers go on while one process writes; the mode is stored in the file. Switching
// needs the file to itself, and SQLite answers "busy" at once rather than wait when another
// connection is reading it (processes creating the same file together), so retry until the
// mode is WAL or the busy timeout has passed.
void use_wal(sqlite::Connection& db) {
    const auto deadline = std::chrono::steady_clock::now() + db.busy_timeout();
    while (true) {
        try {
            auto q = db.query("PRAGMA journal_mode = WAL");
            if (q.step() && q.text(0) == "wal") return;
        } catch (const DbBusyError&) {
            if (std::chrono::steady_clock::now() > deadline) throw;
        }
        if (std::chrono::steady_clock::now() > deadline)
            throw DbLockTimeoutError(printable(db.path()) + ": cannot switch to WAL mode: another process keeps the file "
                                                 "busy; try again when it is done");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

}  // namespace

const std::vector<Migration>& migrations() {
    // Never destroyed: see latest_schema_objects.
    static const std::vector<Migration>& all = *new std::vector<Migration>([] {
        std::vector<Migration> out;
        for (const EmbeddedFile& f : embedded_migrations()) {
            const int version = std::atoi(f.name);
            if (version != static_cast<int>(out.size()) + 1)
                throw Error(std::string("migration ") + f.name + " is out of sequence: expected version " +
                            std::to_string(out.size() + 1));
            out.push_back({version, f.name, f.text});
        }
        return out;
    }());
    return all;
}

int latest_schema_version() { return static_cast<int>(migrations().size()); }

std::string upgrade_notice(const std::string& path, int was) {
    if (was <= 0 || was >= latest_schema_version()) return "";
    return path + " was upgraded from schema version " + std::to_string(was) + " to " +
           std::to_string(latest_schema_version()) + ": builds of sgemm that read an older schema no longer read it";
}

int check_schema(sqlite::Connection& db, bool writable) {
    const FileState state = read_state(db);
    check(db, state, writable);
    return static_cast<int>(state.version);
}

int prepare_schema(sqlite::Connection& db, bool writable) {
    const FileState state = read_state(db);
    check(db, state, writable);
    if (!writable) return static_cast<int>(state.version);
    use_wal(db);
    if (state.version < latest_schema_version()) migrate(db, latest_schema_version());
    return static_cast<int>(state.version);
}

int prepare_schema_of_copy(sqlite::Connection& copy) {
    const FileState state = read_state(copy);
    check(copy, state, true);
    // No WAL: a database in memory has no journal for others to share.
    if (state.version < latest_schema_version()) migrate(copy, latest_schema_version());
    return static_cast<int>(state.version);
}

void migrate(sqlite::Connection& db, int version) {
    sqlite::Transaction transaction(db);
    // Read again under the write lock: another process may have migrated meanwhile.
    const FileState state = read_state(db);
    check(db, state, true);
    const std::int64_t current = state.version;
    for (const Migration& m : migrations()) {
        if (m.version <= current || m.version > version) continue;
        try {
            db.exec(m.sql);
        } catch (const DbError& e) {
            // A plain SQL error from our own migration on a file of an earlier version: it
            // holds a schema other than its version's (stamped lower by hand, or a header
            // copied from another file). The transaction rolls back, so the file is as it
            // was. On a new file (version 0) the SQLite library is the cause: its words stand.
            if ((e.code & 0xff) != SQLITE_ERROR || current == 0) throw;
            throw DbError(printable(db.path()) + " has schema version " + std::to_string(current) +
                              ", but upgrading it failed at migration " + m.name + " (" + e.reason +
                              "): its schema does not fit its version (changed outside sgemm, or damaged); it was "
                              "left untouched",
                          e.code);
        }
    }
    if (version > current) {
        db.exec("PRAGMA user_version = " + std::to_string(version));
        db.exec("PRAGMA application_id = " + std::to_string(kTuningDbApplicationId));
    }
    transaction.commit();
}

}  // namespace sgemm
