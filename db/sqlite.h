// A thin RAII layer over the SQLite C API: one Connection owns a sqlite3 handle and its
// prepared statements; a Query is a use of one of them that resets itself when it goes
// out of scope (an unreset statement would hold a read snapshot open and stall WAL
// checkpoints); a Transaction rolls back unless committed. Every failure is a DbError that
// carries SQLite's message, its result code and the SQL that failed.
#pragma once
#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/util/error.h"

namespace sgemm {

struct DbError : Error {
    DbError(const std::string& message, int code = SQLITE_ERROR, std::string sql = "", std::string reason = "")
        : Error(message), code(code), sql(std::move(sql)), reason(std::move(reason)) {}
    int code;            // SQLite's extended result code
    std::string sql;     // the statement that failed, empty when none ran
    std::string reason;  // SQLite's own words for the failure, empty when SQLite gave none
};

// Another connection kept the database busy: it held the lock, or kept writing the file.
struct DbBusyError : DbError {
    using DbError::DbError;
};

// The lock stayed taken by another connection for longer than the busy timeout, which a
// caller may allow to be longer.
struct DbLockTimeoutError : DbBusyError {
    using DbBusyError::DbBusyError;
};

namespace sqlite {

class Connection;

// SQLite writes the -wal and -shm files beside the database too: one that another user's
// process left behind, owned by them, blocks every write although the database file and its
// folder allow it. Says so, naming the file and its owner, or "" when neither blocks.
std::string unwritable_companion(const std::string& path);

// The folder of the file a symbolic link leads to, where SQLite keeps its -wal and -shm
// files, not the link's own.
std::filesystem::path folder_of(const std::string& path);

// A path as an SQLite URI ("file:///a/b.db", "file:a/b.db"), for a connection that takes URIs;
// only the characters URIs give a meaning to are escaped.
std::string file_uri(const std::string& path);

// A prepared statement, owned and cached by its Connection.
class Statement {
public:
    Statement(Connection& connection, const std::string& sql);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    sqlite3_stmt* get() const { return stmt_; }
    const std::string& sql() const { return sql_; }

private:
    sqlite3_stmt* stmt_ = nullptr;
    std::string sql_;
};

// One execution of a cached statement: bind by position (1-based), step, read columns
// (0-based). Resets and clears its bindings on destruction.
class Query {
public:
    Query(Connection& connection, Statement& statement);
    ~Query();
    Query(const Query&) = delete;
    Query& operator=(const Query&) = delete;

    Query& bind(int index, std::nullptr_t);
    Query& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
    Query& bind(int index, std::int64_t value);
    Query& bind(int index, double value);
    Query& bind(int index, const std::string& value);
    Query& bind(int index, const char* value) { return bind(index, std::string(value)); }
    Query& bind(int index, const std::vector<char>& blob);
    template <class T>
    Query& bind(int index, const std::optional<T>& value) {
        return value ? bind(index, *value) : bind(index, nullptr);
    }
    // Binds the arguments to ?1, ?2, ... in order.
    template <class... Args>
    Query& bind_all(const Args&... args) {
        int index = 0;
        (bind(++index, args), ...);
        return *this;
    }

    // True while there is a row to read; false when done.
    bool step();
    // Runs a statement that returns no rows.
    void run();

    bool is_null(int column) const;
    // Whether the column's value is stored as an integer (not a real, text or a blob).
    bool is_integer(int column) const;
    std::int64_t integer(int column) const;
    double real(int column) const;
    std::string text(int column) const;
    std::vector<char> blob(int column) const;
    std::optional<std::int64_t> optional_integer(int column) const;
    std::optional<double> optional_real(int column) const;

    // The database's path, as its connection names it in messages: for a row's bad value.
    const std::string& database_path() const;

private:
    Connection& connection_;
    Statement& statement_;
};

enum class Access { ReadWrite, ReadWriteExisting, QueryOnly, Immutable, Snapshot, Copy, Memory };

// The oldest SQLite the schema runs on (generated columns, 3.31, and iif, 3.32), as
// meson.build requires it of the build, in sqlite3_libversion_number's form.
constexpr int kOldestSqlite = 3032000;

// Why the SQLite of `version_number` (sqlite3_libversion_number's form: 3032000 is 3.32.0)
// cannot hold the tuning database, or "" where it can. The library loaded at run time may be
// older than the one built against (another machine's libsqlite3.so.0, or an engine's own
// copy, whose functions the process then calls): every connection checks it first.
std::string sqlite_too_old(int version_number);

class Connection {
public:
    // Opens (ReadWrite: creating) the file. ReadWriteExisting is ReadWrite that fails on a
    // missing file rather than make an empty one. QueryOnly reads a file this user may write and
    // changes no data in it, but is read-write to SQLite: the last connection to close then
    // checkpoints and removes the -wal and -shm files, which a read-only one leaves behind
    // (and it recovers what a crashed writer left: a -wal file's commits, a hot journal).
    // Immutable is read-only without locking, for a
    // file no one can be writing (a full disk, where SQLite cannot create the -shm file that
    // shared reading of a WAL database needs, nor a writer add to it). Snapshot copies the file as it stands
    // into memory at once, creating nothing beside it (commits still in a writer's -wal file
    // are not in the copy), read-only; a copy during which the file changed (its size or time
    // of change) is taken again, and DbBusyError ends a fifth such try. Copy is a copy that may
    // be changed (never the file) until refuse_writes(), taken as Snapshot's is, or, where
    // this user may write the file, its folder and its -wal and -shm files, under a read lock
    // with the -wal file's commits (see copy_file). Memory is an
    // empty database in memory, read-write, `path` naming it in messages only.
    Connection(const std::string& path, Access access, std::chrono::milliseconds busy_timeout);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    const std::string& path() const { return path_; }
    sqlite3* handle() const { return db_; }
    std::chrono::milliseconds busy_timeout() const { return busy_timeout_; }
    bool read_only() const;
    // From now on every write fails, as a Snapshot's do: for a Copy once it is prepared.
    void refuse_writes();
    // A Snapshot or Copy that copied the file alone (copy_unchanged_file): commits still in
    // its -wal file are not in this database.
    bool copied_file_alone() const { return copied_file_alone_; }

    // A statement prepared once per connection and reused.
    Query query(const std::string& sql);
    // Runs one or more statements without parameters or results (schema scripts, pragmas).
    void exec(const std::string& sql);
    // The first column of the first row of `sql`, which must return one.
    std::int64_t integer(const std::string& sql);
    // Rows changed by the last INSERT, UPDATE or DELETE.
    int changes() const { return sqlite3_changes(db_); }

    // Throws the DbError for result code `rc` of a statement running `sql`.
    [[noreturn]] void fail(int rc, const std::string& sql) const;

private:
    // Snapshot's and Copy's copy into this in-memory database: through a reader of the file in
    // place where this user may be one, else by copy_unchanged_file.
    void copy_file(Access access);
    void copy_unchanged_file();  // the file alone, without its -wal file, copied again if it changed meanwhile
    void back_up(const Connection& file);  // the whole of `file` into this database

    std::string path_;
    std::chrono::milliseconds busy_timeout_;
    bool refuses_writes_;  // QueryOnly, Snapshot, or a Copy after refuse_writes()
    bool copied_file_alone_ = false;
    sqlite3* db_ = nullptr;
    std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
};

// BEGIN IMMEDIATE takes the write lock at the start (waiting up to the busy timeout), so a
// transaction never fails halfway because another writer came first. Inside a transaction
// already open on the connection it joins that one: the outer commit or rollback decides,
// so a merge can group many single writes into one all-or-nothing transaction.
class Transaction {
public:
    explicit Transaction(Connection& connection);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;

    void commit();

private:
    Connection& connection_;
    bool owner_;         // this object began the transaction
    bool open_ = true;   // not yet committed or rolled back
};

}  // namespace sqlite
}  // namespace sgemm
