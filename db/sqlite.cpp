#include "db/sqlite.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "src/util/text.h"

namespace sgemm::sqlite {

// An absolute path follows an empty authority ("//"): written "file:" + path, a path that
// begins with two slashes (HOME=/ makes one) would give its first component as the authority,
// and SQLite refuses any but "localhost".
std::string file_uri(const std::string& path) {
    std::string uri = !path.empty() && path[0] == '/' ? "file://" : "file:";
    for (char c : path) {
        if (c == '%' || c == '?' || c == '#') {
            static const char* hex = "0123456789abcdef";
            uri += '%';
            uri += hex[(static_cast<unsigned char>(c) >> 4) & 0xf];
            uri += hex[static_cast<unsigned char>(c) & 0xf];
        } else {
            uri += c;
        }
    }
    return uri;
}

namespace {

// A statement fit for one line of an error message.
std::string one_line(const std::string& sql) {
    std::string out;
    for (char c : sql) {
        if (c == '\n' || c == '\t') c = ' ';
        if (c == ' ' && !out.empty() && out.back() == ' ') continue;
        out += c;
    }
    const std::size_t max = 160;
    if (out.size() > max) out = out.substr(0, max) + "...";
    return out;
}

// What shows that a database file changed (a checkpoint wrote pages into it): its size and
// its time of last change.
struct FileState {
    off_t size = -1;
    timespec changed{};
    bool operator==(const FileState& o) const {
        return size == o.size && changed.tv_sec == o.changed.tv_sec && changed.tv_nsec == o.changed.tv_nsec;
    }
};

FileState file_state(const std::string& path) {
    FileState state;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) state.size = st.st_size, state.changed = st.st_mtim;
    return state;
}

// What to check when a write is refused.
std::string why_read_only(const std::string& path) {
    const std::string companion = unwritable_companion(path);
    return companion.empty() ? "check the permissions of the file and of its folder" : companion;
}

// What limits a write to `path`, for a write that failed: SQLite's "disk I/O error" alone
// hides what the user can act on (a full disk, a quota, a limit on file size), and SQLite does
// not keep the errno of a failed write.
std::string room_to_write(const std::string& path) {
    std::string room;
    struct statvfs fs {};
    // A new database's file is not there yet (its write is made under another name): its
    // folder is on the same file system.
    const std::string on = ::access(path.c_str(), F_OK) == 0 ? path : folder_of(path).string();
    if (::statvfs(on.c_str(), &fs) == 0)
        room = "its file system has " + std::to_string(static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize) +
               " bytes free to users other than root (quotas not counted)";
    else
        room = "the free space of its file system is unknown";
    rlimit file_size{};
    if (::getrlimit(RLIMIT_FSIZE, &file_size) == 0 && file_size.rlim_cur != RLIM_INFINITY)
        room += ", and this process may write files of " + std::to_string(file_size.rlim_cur) +
                " bytes at most (ulimit -f)";
    return room;
}

}  // namespace

std::string unwritable_companion(const std::string& path) {
    for (const char* suffix : {"-wal", "-shm"}) {
        const std::string companion = path + suffix;
        struct stat st {};
        if (::stat(companion.c_str(), &st) == 0 && ::access(companion.c_str(), W_OK) != 0)
            return "SQLite's " + printable(companion) + " beside it is not writable by this user (it belongs to user " +
                   std::to_string(st.st_uid) + "): remove it, or have its owner do so, once no process has " +
                   "the database open";
    }
    return "";
}

std::filesystem::path folder_of(const std::string& path) {
    std::error_code ec;
    std::filesystem::path file = std::filesystem::weakly_canonical(path, ec);
    if (ec) file = path;
    return file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
}

Statement::Statement(Connection& connection, const std::string& sql) : sql_(sql) {
    const int rc = sqlite3_prepare_v3(connection.handle(), sql.c_str(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
    if (rc != SQLITE_OK) connection.fail(rc, sql);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Query::Query(Connection& connection, Statement& statement) : connection_(connection), statement_(statement) {}

Query::~Query() {
    sqlite3_reset(statement_.get());
    sqlite3_clear_bindings(statement_.get());
}

Query& Query::bind(int index, std::nullptr_t) {
    const int rc = sqlite3_bind_null(statement_.get(), index);
    if (rc != SQLITE_OK) connection_.fail(rc, statement_.sql());
    return *this;
}

Query& Query::bind(int index, std::int64_t value) {
    const int rc = sqlite3_bind_int64(statement_.get(), index, value);
    if (rc != SQLITE_OK) connection_.fail(rc, statement_.sql());
    return *this;
}

Query& Query::bind(int index, double value) {
    const int rc = sqlite3_bind_double(statement_.get(), index, value);
    if (rc != SQLITE_OK) connection_.fail(rc, statement_.sql());
    return *this;
}

Query& Query::bind(int index, const std::string& value) {
    const int rc = sqlite3_bind_text64(statement_.get(), index, value.data(), value.size(), SQLITE_TRANSIENT,
                                       SQLITE_UTF8);
    if (rc != SQLITE_OK) connection_.fail(rc, statement_.sql());
    return *this;
}

Query& Query::bind(int index, const std::vector<char>& blob) {
    const int rc = sqlite3_bind_blob64(statement_.get(), index, blob.data(), blob.size(), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) connection_.fail(rc, statement_.sql());
    return *this;
}

bool Query::step() {
    const int rc = sqlite3_step(statement_.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    connection_.fail(rc, statement_.sql());
}

void Query::run() {
    while (step()) {
    }
}

const std::string& Query::database_path() const { return connection_.path(); }

bool Query::is_null(int column) const { return sqlite3_column_type(statement_.get(), column) == SQLITE_NULL; }

bool Query::is_integer(int column) const { return sqlite3_column_type(statement_.get(), column) == SQLITE_INTEGER; }

std::int64_t Query::integer(int column) const { return sqlite3_column_int64(statement_.get(), column); }

double Query::real(int column) const { return sqlite3_column_double(statement_.get(), column); }

std::string Query::text(int column) const {
    const auto* p = sqlite3_column_text(statement_.get(), column);
    const int n = sqlite3_column_bytes(statement_.get(), column);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
}

std::vector<char> Query::blob(int column) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(statement_.get(), column));
    const int n = sqlite3_column_bytes(statement_.get(), column);
    return p ? std::vector<char>(p, p + n) : std::vector<char>();
}

std::optional<std::int64_t> Query::optional_integer(int column) const {
    if (is_null(column)) return std::nullopt;
    return integer(column);
}

std::optional<double> Query::optional_real(int column) const {
    if (is_null(column)) return std::nullopt;
    return real(column);
}

std::string sqlite_too_old(int version_number) {
    if (version_number >= kOldestSqlite) return "";
    const auto dotted = [](int number) {
        return std::to_string(number / 1000000) + "." + std::to_string(number / 1000 % 1000) + "." +
               std::to_string(number % 1000);
    };
    return "the SQLite this process runs, " + dotted(version_number) + ", is older than " + dotted(kOldestSqlite) +
           ", which the tuning database needs: install a newer libsqlite3";
}

Connection::Connection(const std::string& path, Access access, std::chrono::milliseconds busy_timeout)
    : path_(path),
      busy_timeout_(busy_timeout),
      refuses_writes_(access == Access::Snapshot || access == Access::QueryOnly) {
    if (const std::string why = sqlite_too_old(sqlite3_libversion_number()); !why.empty())
        throw DbError("cannot open " + printable(path) + ": " + why);
    int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
    std::string name = file_uri(path);
    switch (access) {
        case Access::ReadWrite: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
        case Access::ReadWriteExisting: flags |= SQLITE_OPEN_READWRITE; break;
        case Access::QueryOnly: flags |= SQLITE_OPEN_READWRITE; break;
        case Access::Immutable:
            flags |= SQLITE_OPEN_READONLY;
            name += "?immutable=1";
            break;
        case Access::Snapshot:
        case Access::Copy:
        case Access::Memory:
            flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
            name = ":memory:";
            break;
    }
    const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw DbError("cannot open " + printable(path) + ": " + message, rc);
    }
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, static_cast<int>(busy_timeout.count()));
    try {
        if (access == Access::QueryOnly) exec("PRAGMA query_only = ON");
        if (access == Access::Snapshot || access == Access::Copy) copy_file(access);
        // A copy of a file this user may not write is read-only as the file is: a write fails
        // rather than change the copy alone.
        if (access == Access::Snapshot) refuse_writes();
    } catch (...) {
        sqlite3_close_v2(db_);
        throw;
    }
}

void Connection::copy_file(Access access) {
    // A Copy by a user who may write the file, its folder and SQLite's files beside it reads
    // the file as such a reader reads it in place: under a read lock, with the commits still
    // in its -wal file (an older sgemm's, at work or crashed). A Snapshot's user may not, and
    // copies the file alone; so does a Copy where the -shm file cannot be made (a full disk).
    const bool may_share = ::access(path_.c_str(), W_OK) == 0 && ::access(folder_of(path_).c_str(), W_OK) == 0 &&
                           unwritable_companion(path_).empty();
    if (access == Access::Copy && may_share) try {
            back_up(Connection(path_, Access::QueryOnly, busy_timeout_));
            return;
        } catch (const DbError& e) {
            if ((e.code & 0xff) != SQLITE_IOERR) throw;
        }
    copy_unchanged_file();
    copied_file_alone_ = true;
}

void Connection::back_up(const Connection& file) {
    sqlite3_backup* backup = sqlite3_backup_init(db_, "main", file.handle(), "main");
    if (!backup) fail(sqlite3_errcode(db_), "");
    const int rc = sqlite3_backup_step(backup, -1);
    // The backup leaves its error on the destination, this connection, not on the file's.
    const int finished = sqlite3_backup_finish(backup);
    if (rc != SQLITE_DONE) fail(finished != SQLITE_OK ? finished : rc, "");
}

void Connection::copy_unchanged_file() {
    // A checkpoint that writes the file while it is copied leaves a torn copy: copy it again.
    for (int attempt = 1;; ++attempt) {
        const FileState before = file_state(path_);
        back_up(Connection(path_, Access::Immutable, busy_timeout_));
        if (file_state(path_) == before) break;
        if (attempt == 5)
            throw DbBusyError(printable(path_) + " changed each time it was read: another process keeps writing it", SQLITE_BUSY);
    }
}

void Connection::refuse_writes() {
    exec("PRAGMA query_only = 1");
    refuses_writes_ = true;
}

Connection::~Connection() {
    statements_.clear();  // finalize before closing, or the close is deferred
    sqlite3_close_v2(db_);
}

bool Connection::read_only() const { return refuses_writes_ || sqlite3_db_readonly(db_, "main") == 1; }

Query Connection::query(const std::string& sql) {
    auto it = statements_.find(sql);
    if (it == statements_.end()) it = statements_.emplace(sql, std::make_unique<Statement>(*this, sql)).first;
    return Query(*this, *it->second);
}

void Connection::exec(const std::string& sql) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    sqlite3_free(message);  // the connection's errmsg says the same, and fail() reads that
    if (rc != SQLITE_OK) fail(rc, sql);
}

std::int64_t Connection::integer(const std::string& sql) {
    Query q = query(sql);
    if (!q.step()) throw DbError(printable(path_) + ": no row from: " + one_line(sql), SQLITE_ERROR, sql);
    return q.integer(0);
}

void Connection::fail(int rc, const std::string& sql) const {
    // Escaped: a trigger's RAISE or a damaged file's text can reach it, and it goes into messages.
    const std::string message = printable(sqlite3_errmsg(db_));
    const int code = sqlite3_extended_errcode(db_) != SQLITE_OK ? sqlite3_extended_errcode(db_) : rc;
    const std::string where = sql.empty() ? "" : " (while running: " + one_line(sql) + ")";
    switch (code & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            // The other process is the problem, not the SQL: none in the message. How to wait
            // longer is the caller's to say (sgemm-db's --busy-timeout).
            throw DbLockTimeoutError(printable(path_) + ": the database is locked: another process held it for longer than the "
                                             "busy timeout (" + std::to_string(busy_timeout_.count()) +
                                         " ms); try again when it is done",
                                     code, sql);
        case SQLITE_NOTADB:  // whatever ran, the file is the problem: no SQL in the message
            throw DbError(printable(path_) + " is not an SQLite database (" + message + ")", code, sql);
        case SQLITE_CORRUPT:  // as for NOTADB: the file is the problem, not the SQL
            throw DbError(printable(path_) + " is corrupt (" + message +
                              "); nothing was changed: restore it from a copy, or move it aside",
                          code, sql);
        case SQLITE_READONLY:
            throw DbError(printable(path_) + " cannot be written (" + message + "): " + why_read_only(path_) + where, code, sql);
        case SQLITE_CANTOPEN:
            throw DbError("cannot open " + printable(path_) + " (" + message + ")" + where, code, sql);
        case SQLITE_FULL:
        case SQLITE_IOERR: {
            // A full file system or a write's failure may be the room (a full disk, a limit on
            // file size); a read's or a lock's (a failing disk, NFS) is not, and would mislead.
            const bool room_may_be_why = code == SQLITE_FULL || code == SQLITE_IOERR_WRITE ||
                                         code == SQLITE_IOERR_TRUNCATE || code == SQLITE_IOERR_SHMSIZE ||
                                         code == SQLITE_IOERR_FSYNC;
            throw DbError(printable(path_) + ": " + message + where + (room_may_be_why ? "; " + room_to_write(path_) : ""), code,
                          sql, message);
        }
        default: throw DbError(printable(path_) + ": " + message + where, code, sql, message);
    }
}

Transaction::Transaction(Connection& connection)
    : connection_(connection), owner_(sqlite3_get_autocommit(connection.handle()) != 0) {
    if (owner_) connection_.query("BEGIN IMMEDIATE").run();
}

Transaction::~Transaction() {
    if (owner_ && open_) sqlite3_exec(connection_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    if (owner_) connection_.query("COMMIT").run();
    open_ = false;
}

}  // namespace sgemm::sqlite
