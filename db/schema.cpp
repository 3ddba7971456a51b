#include "db/schema.h"

#include <cstdlib>

#include "db/embedded_migrations.h"

namespace sgemm {

namespace {

// Throws unless the file holds a tuning database, or nothing at all yet.
void check_is_tuning_db(sqlite::Connection& db) {
    const std::int64_t application_id = db.integer("PRAGMA application_id");
    if (application_id == kTuningDbApplicationId) return;
    const std::int64_t objects = db.integer("SELECT count(*) FROM sqlite_master");
    if (application_id == 0 && objects == 0) return;
    throw DbError(db.path() + " is an SQLite database, but not a tuning database (application_id " +
                  std::to_string(application_id) + ", " + std::to_string(objects) +
                  " schema objects); it was left untouched: give another --db");
}

// Throws unless this build can use `version`.
void check_version(sqlite::Connection& db, std::int64_t version, bool writable) {
    const int latest = latest_schema_version();
    if (version > latest)
        throw DbError(db.path() + " has schema version " + std::to_string(version) +
                      ", newer than this build of sgemm reads (" + std::to_string(latest) +
                      "): it was written by a newer sgemm; use that, or another --db");
    if (!writable && version < latest)
        throw DbError(db.path() + " has schema version " + std::to_string(version) + " and this build reads " +
                      std::to_string(latest) + ": it is upgraded when opened for writing once (sgemm-db upgrade --db " +
                      db.path() + ")");
}

}  // namespace

const std::vector<Migration>& migrations() {
    static const std::vector<Migration> all = [] {
        std::vector<Migration> out;
        for (const EmbeddedFile& f : embedded_migrations()) {
            const int version = std::atoi(f.name);
            if (version != static_cast<int>(out.size()) + 1)
                throw Error(std::string("migration ") + f.name + " is out of sequence: expected version " +
                            std::to_string(out.size() + 1));
            out.push_back({version, f.name, f.text});
        }
        return out;
    }();
    return all;
}

int latest_schema_version() { return static_cast<int>(migrations().size()); }

int prepare_schema(sqlite::Connection& db, bool writable) {
    check_is_tuning_db(db);
    const int version = static_cast<int>(db.integer("PRAGMA user_version"));
    check_version(db, version, writable);
    if (!writable) return version;
    // WAL lets readers go on while one process writes; the mode is stored in the file.
    db.exec("PRAGMA journal_mode = WAL");
    if (version < latest_schema_version()) migrate(db, latest_schema_version());
    return version;
}

void migrate(sqlite::Connection& db, int version) {
    sqlite::Transaction transaction(db);
    // Read again under the write lock: another process may have migrated meanwhile.
    check_is_tuning_db(db);
    const std::int64_t current = db.integer("PRAGMA user_version");
    check_version(db, current, true);
    for (const Migration& m : migrations())
        if (m.version > current && m.version <= version) db.exec(m.sql);
    if (version > current) {
        db.exec("PRAGMA user_version = " + std::to_string(version));
        db.exec("PRAGMA application_id = " + std::to_string(kTuningDbApplicationId));
    }
    transaction.commit();
}

}  // namespace sgemm
