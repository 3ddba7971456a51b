#include "db/store.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <random>

#include "db/publish.h"
#include "db/schema.h"
#include "db/verify.h"
#include "src/util/file_on_the_way.h"
#include "src/util/text.h"

namespace sgemm {

namespace fs = std::filesystem;

namespace {

// The current time as the database stores times: ISO 8601 UTC with milliseconds.
#define SGEMM_DB_NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

// The shape key's columns, in ShapeKey's order, as every table that holds one names them.
// In every statement the device id is parameter ?1 and the shape key ?2 to ?8.
#define SGEMM_DB_SHAPE(t) t "m, " t "n, " t "k, " t "trans_a, " t "trans_b, " t "precision, " t "alignment"
#define SGEMM_DB_SHAPE_VALUES "?2, ?3, ?4, ?5, ?6, ?7, ?8"
#define SGEMM_DB_KEY_IS(t)                                                                                     \
    t "device_id = ?1 AND " t "m = ?2 AND " t "n = ?3 AND " t "k = ?4 AND " t "trans_a = ?5 AND " t "trans_b = ?6 " \
      "AND " t "precision = ?7 AND " t "alignment = ?8"

void bind_key(sqlite::Query& q, const std::string& device_id, const ShapeKey& s) {
    q.bind(1, device_id).bind(2, s.M).bind(3, s.N).bind(4, s.K);
    q.bind(5, static_cast<int>(s.trans_a)).bind(6, static_cast<int>(s.trans_b));
    q.bind(7, to_string(s.precision)).bind(8, s.alignment);
}

ShapeKey read_shape(const sqlite::Query& q, int first) {
    // The schema holds 64-bit sizes; past int, a cast would wrap 2^32 + 8 to 8 and match
    // the calls of M = 8. Its columns take any value: 8.5 or '8x', edited in, would be read
    // as 8 too, a second row for M = 8.
    for (int i = 0; i < 3; ++i) {
        if (!q.is_integer(first + i))
            throw DbError(printable(q.database_path()) + ": a row holds the size " + single_quoted(printable(q.text(first + i))) +
                          ", not a whole number: no tune writes one (was the file edited?); delete the row with sqlite3");
        if (q.integer(first + i) > std::numeric_limits<int>::max())
            throw DbError(printable(q.database_path()) + ": a row holds the size " + std::to_string(q.integer(first + i)) + ", past 2^31 - 1: "
                          "no tune writes one (was the file edited?); delete the row with sqlite3");
    }
    ShapeKey s;
    s.M = static_cast<int>(q.integer(first));
    s.N = static_cast<int>(q.integer(first + 1));
    s.K = static_cast<int>(q.integer(first + 2));
    s.trans_a = q.integer(first + 3) != 0;
    s.trans_b = q.integer(first + 4) != 0;
    s.precision = parse_gemm_precision(q.text(first + 5));
    s.alignment = static_cast<int>(q.integer(first + 6));
    return s;
}

#define SGEMM_DB_KERNEL_COLUMNS "k.family, k.params, k.description, k.template_hash"

KernelRef read_kernel(const sqlite::Query& q, int first) {
    // A list no tune writes is the file's fault, not the user's input: a database error, named.
    std::vector<int> params;
    try {
        params = parse_params(q.text(first + 1));
    } catch (const Error& e) {
        // Deleting the row would leave the winners, binaries and measurements that refer to
        // it dangling (the sqlite3 shell does not enforce foreign keys): put it back instead.
        throw DbError(printable(q.database_path()) + ": a kernels row of family " + printable(q.text(first)) + " holds the " + e.what() +
                      ": no tune writes one (was the file edited?); put it back as the tune wrote it, integers "
                      "separated by commas (sqlite3)");
    }
    return KernelRef{q.text(first), std::move(params), q.text(first + 2), q.text(first + 3)};
}

#define SGEMM_DB_BINARY_COLUMNS                                                                                     \
    "b.cache_key, b.arch, b.nvrtc_version, b.lowered_name, b.cubin, b.registers, b.shared_bytes, b.stack_bytes, " \
    "b.spill_store_bytes, b.spill_load_bytes, b.compile_ms, b.hits, b.cubin_checksum"

Binary read_binary(const sqlite::Query& q, int first, KernelRef kernel) {
    Binary b;
    b.cache_key = q.text(first);
    b.kernel = std::move(kernel);
    b.arch = static_cast<int>(q.integer(first + 1));
    b.nvrtc_version = q.text(first + 2);
    b.lowered_name = q.text(first + 3);
    b.cubin = q.blob(first + 4);
    b.registers = static_cast<int>(q.integer(first + 5));
    b.shared_bytes = static_cast<int>(q.integer(first + 6));
    b.stack_bytes = static_cast<int>(q.integer(first + 7));
    b.spill_store_bytes = static_cast<int>(q.integer(first + 8));
    b.spill_load_bytes = static_cast<int>(q.integer(first + 9));
    b.compile_ms = q.real(first + 10);
    b.hits = q.integer(first + 11);
    b.cubin_checksum = q.text(first + 12);  // NULL, read as "", before schema version 4
    return b;
}

// The first kWinnerColumns columns of every winner query.
#define SGEMM_DB_WINNER_COLUMNS                                                       \
    "w.device_id, " SGEMM_DB_SHAPE("w.") ", " SGEMM_DB_KERNEL_COLUMNS                 \
    ", w.binary_key, w.ms, w.cublas_ms, w.tolerance, w.provenance, w.tuned_at, w.speedup, w.tflops, w.narrowed_by"
#define SGEMM_DB_WINNER_FROM " FROM winners w JOIN kernels k ON k.id = w.kernel_id "
#define SGEMM_DB_WINNER_ORDER " ORDER BY w.device_id, " SGEMM_DB_SHAPE("w.")
constexpr int kWinnerColumns = 21;

Winner read_winner(const sqlite::Query& q) {
    Winner w;
    w.device_id = q.text(0);
    w.shape = read_shape(q, 1);
    w.kernel = read_kernel(q, 8);
    w.binary_key = q.text(12);
    w.ms = q.real(13);
    w.cublas_ms = q.real(14);
    w.tolerance = q.real(15);
    w.provenance = q.text(16);
    w.tuned_at = q.text(17);
    w.speedup = q.real(18);
    w.tflops = q.real(19);
    w.narrowed_by = q.text(20);
    return w;
}

DeviceFingerprint read_device(const sqlite::Query& q) {
    DeviceFingerprint d;
    d.gpu_name = q.text(1);
    d.cc_major = static_cast<int>(q.integer(2));
    d.cc_minor = static_cast<int>(q.integer(3));
    d.sm_count = static_cast<int>(q.integer(4));
    d.memory_bytes = q.integer(5);
    d.driver_version = static_cast<int>(q.integer(6));
    d.runtime_version = static_cast<int>(q.integer(7));
    d.nvrtc_version = q.text(8);
    d.library_version = q.text(9);
    return d;
}

#define SGEMM_DB_DEVICE_SELECT                                                                           \
    "SELECT id, gpu_name, cc_major, cc_minor, sm_count, memory_bytes, driver_version, runtime_version, " \
    "nvrtc_version, library_version FROM devices "

// Opens the file as `mode` asks, after the checks SQLite would otherwise answer with
// vaguer messages: a missing file for reading, a folder where the file should be, a folder
// that cannot hold the -wal and -shm files beside the database.
struct OpenedFile {
    std::unique_ptr<sqlite::Connection> db;
    int version;  // before any upgrade
};

// The size of `path`'s -wal file, which a copy of the file alone does not read; 0 for none.
std::int64_t wal_bytes(const std::string& path) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path + "-wal", ec);
    return ec ? 0 : static_cast<std::int64_t>(size);
}

// Whether the database file exists, refusing what is not a file and a path this user cannot
// look along (a folder on the way they may not enter): that is not a missing database, which
// the messages would send them to create.
bool database_file_exists(const std::string& path) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec && status.type() != fs::file_type::not_found)
        throw DbError("cannot reach " + printable(path) + ": " + ec.message() +
                          (ec == std::errc::permission_denied ? " (check the permissions of its folders)" : ""),
                      SQLITE_CANTOPEN);
    if (fs::is_directory(status)) throw DbError(printable(path) + " is a folder, not a database file", SQLITE_CANTOPEN);
    // A path through a file ("tuning.db/", "tuning.db/x.db") is not found either, but no tune
    // or import can make a database there, as the messages for a missing one would say.
    if (status.type() == fs::file_type::not_found)
        if (const fs::path file = file_on_the_way(path); !file.empty())
            throw DbError("cannot reach " + printable(path) + ": " + printable(file.string()) + " is not a folder", SQLITE_CANTOPEN);
    // SQLite would wait for ever on a FIFO's writer.
    if (fs::exists(status) && !fs::is_regular_file(status))
        throw DbError(printable(path) + " is not a regular file, so not a database file", SQLITE_CANTOPEN);
    // SQLite would say only "unable to open database file".
    if (fs::exists(status) && ::access(path.c_str(), R_OK) != 0)
        throw DbError("cannot read " + printable(path) + ": the file is not readable (check its permissions)", SQLITE_CANTOPEN);
    return fs::exists(status);
}

DbError unwritable_folder(const std::string& path, const fs::path& folder) {
    return DbError("cannot write " + printable(path) + ": its folder " + printable(folder.string()) +
                       " is not writable, and SQLite keeps its -wal and -shm files beside the database",
                   SQLITE_READONLY);
}

DbError not_a_folder(const std::string& path, const fs::path& folder) {
    return DbError("cannot write " + printable(path) + ": " + printable(folder.string()) + " is not a folder", SQLITE_CANTOPEN);
}

DbError read_only_file(const std::string& path) {
    return DbError("cannot write " + printable(path) + ": the file is read-only (check its permissions)", SQLITE_READONLY);
}

// Makes the folder of `path`, a database to write, where it is missing (the default path's);
// refuses one that is no folder, or that this user may not write: SQLite keeps its -wal and
// -shm files there.
void make_folder_to_write(const std::string& path) {
    std::error_code ec;
    const fs::path folder = sqlite::folder_of(path);
    const bool folder_writable = ::access(folder.c_str(), W_OK) == 0;
    if (!fs::exists(folder, ec) && !fs::create_directories(folder, ec))
        throw DbError("cannot create the folder " + printable(folder.string()) + " for " + printable(path) + ": " + ec.message(),
                      SQLITE_CANTOPEN);
    if (!fs::is_directory(folder, ec)) throw not_a_folder(path, folder);
    if (!folder_writable && ::access(folder.c_str(), W_OK) != 0) throw unwritable_folder(path, folder);
}

// An empty database in memory at the latest schema, named `path` in messages: what a new file
// at `path` starts as.
std::unique_ptr<sqlite::Connection> new_schema(const std::string& path) {
    auto schema = std::make_unique<sqlite::Connection>(path, sqlite::Access::Memory, std::chrono::milliseconds(0));
    prepare_schema_of_copy(*schema);
    return schema;
}

// A reader's open of a file at this build's schema; OlderSchemaError for an older one.
OpenedFile open_to_read_at_its_schema(const std::string& path, std::chrono::milliseconds busy_timeout) {
    std::error_code ec;
    const fs::path folder = sqlite::folder_of(path);
    const bool exists = database_file_exists(path);
    const bool folder_writable = ::access(folder.c_str(), W_OK) == 0;
    if (!exists)
        throw DbError("no tuning database at " + printable(path) + ": a tune, an import or a merge writes one there",
                      SQLITE_CANTOPEN);
    // A reader that may not write the file must not leave -wal and -shm files of its own
    // beside it: SQLite gives them the file's permissions but this user as owner, and they
    // stay after a read-only close, so the file's owner could no longer write their own
    // database (nor, in a sticky folder, remove them). Such a reader copies the file into
    // memory instead, and never opens it through SQLite's shared files. So it sees the
    // database as of its last checkpoint: the commits of a writer still at work (a tune in
    // progress) show once that writer checkpoints or closes.
    if (::access(path.c_str(), W_OK) != 0) {
        auto db = std::make_unique<sqlite::Connection>(path, sqlite::Access::Snapshot, busy_timeout);
        const int version = prepare_schema(*db, false);
        return {std::move(db), version};
    }
    // Reading a WAL database needs the -shm file, which a folder this user may not write
    // cannot take. Another user who may (the folder's owner) can be writing the database
    // meanwhile, so it is read from a copy, as above: read in place without locks, a
    // checkpoint running at the same time tore the pages a reader saw ("corrupt"). A
    // reader who may write the file and its folder reads it in place, querying only: the
    // last connection to close then removes the -wal and -shm files, as a writer's does.
    auto db = std::make_unique<sqlite::Connection>(
        path, folder_writable ? sqlite::Access::QueryOnly : sqlite::Access::Snapshot, busy_timeout);
    try {
        const int version = prepare_schema(*db, false);
        return {std::move(db), version};
    } catch (const DbError& e) {
        // The -shm file could not be made although the folder is writable: the disk is
        // full (or a file size limit holds). Without WAL content to miss, the file alone is
        // the database, and no writer can be adding any on that disk: read it as immutable.
        if (!folder_writable || (e.code & 0xff) != SQLITE_IOERR) throw;
        if (fs::file_size(path + "-wal", ec) > 0 && !ec)
            throw DbError("cannot read " + printable(path) + ": SQLite must create its -shm file beside it to read the "
                              "commits in its -wal file, and writing there fails (is the disk full?): " +
                              e.what(),
                          e.code);
    }
    db = std::make_unique<sqlite::Connection>(path, sqlite::Access::Immutable, busy_timeout);
    const int version = prepare_schema(*db, false);
    return {std::move(db), version};
}

OpenedFile open_file(const std::string& path, OpenMode mode, std::chrono::milliseconds busy_timeout) {
    if (mode == OpenMode::Trial || mode == OpenMode::New) {
        // No WAL, as for a copy: a database in memory has no journal for others to share.
        const bool copy = mode == OpenMode::Trial && database_file_exists(path);
        auto db = std::make_unique<sqlite::Connection>(path, copy ? sqlite::Access::Copy : sqlite::Access::Memory,
                                                       busy_timeout);
        db->exec("PRAGMA foreign_keys = ON");  // as a file opened for writing, so it refuses alike
        const int version = prepare_schema_of_copy(*db);
        return {std::move(db), version};
    }
    if (mode == OpenMode::ReadOnly) {
        try {
            return open_to_read_at_its_schema(path, busy_timeout);
        } catch (const OlderSchemaError&) {
            // The copy holds the commits still in the -wal file (an older sgemm's) where this
            // user may read the file in place, and misses them where a Snapshot would.
            auto copy = std::make_unique<sqlite::Connection>(path, sqlite::Access::Copy, busy_timeout);
            const int version = prepare_schema_of_copy(*copy);
            copy->refuse_writes();
            return {std::move(copy), version};
        }
    }
    const bool missing = !database_file_exists(path);  // and its refusals: a folder, a path this user cannot reach
    make_folder_to_write(path);
    // A new file is made whole, with its schema; where it cannot be, in place (db/publish.h).
    // Publishing sweeps what killed publishers left beside the file; a writer of a file that
    // is there sweeps it too, once, as the file may have appeared after such a kill.
    const bool published = missing && publish_new_database(*new_schema(path), path);
    if (!missing) remove_abandoned_incomplete_files_once(path);
    auto db = std::make_unique<sqlite::Connection>(path, sqlite::Access::ReadWrite, busy_timeout);
    // SQLite quietly opens a write-protected file read-only; say so now rather than at the
    // first write.
    if (db->read_only()) throw read_only_file(path);
    // NORMAL is safe in WAL mode: a crashed process never corrupts the file or loses a
    // commit; only a power cut may lose the last commits. It spares an fsync per commit.
    db->exec("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL");
    const int version = prepare_schema(*db, true);
    return {std::move(db), published ? 0 : version};
}

}  // namespace

int check_writable_database(const std::string& path, std::chrono::milliseconds busy_timeout) {
    const bool exists = database_file_exists(path);
    const fs::path folder = sqlite::folder_of(path);
    // The writer creates a missing folder: its nearest existing ancestor must take it. The walk
    // up goes from the absolute folder: a relative one ("new/t.db") has no parent to reach.
    std::error_code ec;
    const fs::path absolute_folder = fs::absolute(folder, ec);
    fs::path existing = absolute_folder;
    while (!fs::exists(existing, ec) && existing.has_parent_path() && existing.parent_path() != existing)
        existing = existing.parent_path();
    if (!fs::is_directory(existing, ec)) throw not_a_folder(path, existing);
    if (::access(existing.c_str(), W_OK) != 0) {
        if (existing == absolute_folder) throw unwritable_folder(path, folder);
        throw DbError("cannot create the folder " + printable(folder.string()) + " for " + printable(path) + ": " +
                          std::error_code(errno, std::generic_category()).message(),
                      SQLITE_CANTOPEN);
    }
    if (!exists) return 0;
    if (::access(path.c_str(), W_OK) != 0) throw read_only_file(path);
    const std::string companion = sqlite::unwritable_companion(path);
    if (!companion.empty()) throw DbError("cannot write " + printable(path) + ": " + companion, SQLITE_READONLY);
    // Read in place, as a reader who may write the file and its folder does: with the commits
    // still in its -wal file, and no copy of a file that may hold hundreds of MB of binaries.
    sqlite::Connection reader(path, sqlite::Access::QueryOnly, busy_timeout);
    return check_schema(reader, true);
}

TuningStore::TuningStore(const std::string& path, OpenMode mode, std::chrono::milliseconds busy_timeout)
{
    OpenedFile opened = open_file(path, mode, busy_timeout);
    db_ = std::move(opened.db);
    opened_version_ = opened.version;
    if (mode == OpenMode::ReadOnly && db_->copied_file_alone()) unread_wal_bytes_ = wal_bytes(path);
}

bool TuningStore::publish_as_new_file(const std::string& path,
                                      const std::function<void(const std::string& file)>& before_copy) {
    make_folder_to_write(path);
    return publish_new_database(*db_, path, before_copy);
}

int TuningStore::schema_version() { return static_cast<int>(db_->integer("PRAGMA user_version")); }

std::string TuningStore::add_device(const DeviceFingerprint& d) {
    const std::string id = d.id();
    sqlite::Transaction t(*db_);
    db_->query("INSERT INTO devices (id, gpu_name, cc_major, cc_minor, sm_count, memory_bytes, "
               "driver_version, runtime_version, nvrtc_version, library_version) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (id) DO NOTHING")
        .bind_all(id, d.gpu_name, d.cc_major, d.cc_minor, d.sm_count, d.memory_bytes, d.driver_version,
                  d.runtime_version, d.nvrtc_version, d.library_version)
        .run();
    t.commit();
    return id;
}

std::vector<DeviceFingerprint> TuningStore::devices() {
    std::vector<DeviceFingerprint> out;
    auto q = db_->query(SGEMM_DB_DEVICE_SELECT "ORDER BY gpu_name, id");
    while (q.step()) out.push_back(read_device(q));
    return out;
}

std::vector<TuningStore::DeviceRow> TuningStore::device_rows() {
    std::vector<DeviceRow> out;
    auto q = db_->query(SGEMM_DB_DEVICE_SELECT "ORDER BY gpu_name, id");
    while (q.step()) out.push_back({q.text(0), read_device(q)});
    return out;
}

std::vector<TuningStore::DeviceRow> earlier_builds_of(TuningStore& store, const DeviceFingerprint& gpu) {
    std::vector<TuningStore::DeviceRow> out;
    for (TuningStore::DeviceRow& row : store.device_rows())
        if (earlier_build(row.fields, gpu)) out.push_back(std::move(row));
    return out;
}

std::string earlier_build_label(const TuningStore::DeviceRow& row, const DeviceFingerprint& gpu) {
    return "device " + row.stored_id.substr(0, 8) + " (" + build_differences(row.fields, gpu) + ")";
}

std::vector<TuningStore::EditedDeviceRow> TuningStore::edited_device_rows() {
    std::vector<EditedDeviceRow> out;
    for (DeviceRow& row : device_rows())
        if (row.fields.id() != row.stored_id) out.push_back({std::move(row), 0});
    for (EditedDeviceRow& row : out) {
        auto q = db_->query("SELECT count(*) FROM winners WHERE device_id = ?1");
        q.bind(1, row.stored_id);
        if (q.step()) row.winners = q.integer(0);
    }
    return out;
}

std::int64_t TuningStore::dangling_rows() {
    return db_->integer("SELECT count(*) FROM pragma_foreign_key_check WHERE parent IN ('devices', 'kernels')");
}

std::int64_t TuningStore::dangling_winners(const std::string& device_id) {
    auto q = db_->query("SELECT count(*) FROM winners w WHERE (?1 = '' OR w.device_id = ?1) AND "
                        "(NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = w.device_id) OR "
                        "NOT EXISTS (SELECT 1 FROM kernels k WHERE k.id = w.kernel_id))");
    q.bind(1, device_id);
    return q.step() ? q.integer(0) : 0;
}

std::int64_t TuningStore::winners_of_missing_kernels(const std::string& device_id) {
    auto q = db_->query("SELECT count(*) FROM winners w WHERE (?1 = '' OR w.device_id = ?1) AND "
                        "NOT EXISTS (SELECT 1 FROM kernels k WHERE k.id = w.kernel_id)");
    q.bind(1, device_id);
    return q.step() ? q.integer(0) : 0;
}

void TuningStore::remove_device(const std::string& id) {
    db_->query("DELETE FROM devices WHERE id = ?1").bind(1, id).run();
}

std::optional<DeviceFingerprint> TuningStore::find_device(const std::string& id) {
    auto q = db_->query(SGEMM_DB_DEVICE_SELECT "WHERE id = ?1");
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    return read_device(q);
}

std::vector<std::string> TuningStore::device_ids_without_row() {
    auto q = db_->query("SELECT device_id FROM winners UNION SELECT device_id FROM measurements UNION "
                        "SELECT device_id FROM misses EXCEPT SELECT id FROM devices ORDER BY 1");
    std::vector<std::string> ids;
    while (q.step()) ids.push_back(q.text(0));
    return ids;
}

std::string TuningStore::resolve_device(const std::string& id_or_prefix) {
    if (id_or_prefix.empty()) throw UnknownDeviceError("an empty device id names no device");
    const std::string wanted = lower_case(id_or_prefix);  // ids are lower-case hex: C94D names c94d...
    std::vector<std::string> matches;
    auto q = db_->query("SELECT id FROM devices WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id");
    q.bind(1, wanted);
    while (q.step()) matches.push_back(q.text(0));
    for (const std::string& id : matches)
        if (id == id_or_prefix) return id;  // a device row's whole id: no other table need be read
    // Rows whose device row was deleted by hand still name it: list shows them, and prune
    // --device removes them. Such an id was written by hand too, so it may not be lower case.
    const std::vector<std::string> without_row = device_ids_without_row();
    for (const std::string& id : without_row)
        if (lower_case(id).compare(0, wanted.size(), wanted) == 0) matches.push_back(id);
    for (const std::string& id : matches)
        if (id == id_or_prefix) return id;
    for (const std::string& id : matches)
        if (lower_case(id) == wanted) return id;
    if (matches.size() == 1) return matches.front();
    // A prefix of several lists those it names, to pick from; one of none lists them all.
    const auto named = [&matches](const std::string& id) {
        return matches.empty() || std::find(matches.begin(), matches.end(), id) != matches.end();
    };
    std::string listed;
    for (const DeviceRow& row : device_rows())
        if (named(row.stored_id)) listed += row.listing_line();
    for (const std::string& id : without_row)
        if (named(id)) listed += listing_line_without_row(id);
    if (listed.empty()) listed = " none";
    throw UnknownDeviceError(single_quoted(id_or_prefix) + " " +
                             (matches.empty() ? "names no device in " + printable(path()) + "; its devices:"
                                              : "names several devices in " + printable(path()) + ":") +
                             listed);
}

std::string TuningStore::DeviceRow::listing_line() const {
    return "\n  " + printable(stored_id) + "  " + printable(fields.describe());
}

std::string TuningStore::listing_line_without_row(const std::string& id) {
    return "\n  " + printable(id) + "  (no device row)";
}

std::int64_t TuningStore::kernel_id(const KernelRef& kernel) {
    const std::string params = params_text(kernel.params);
    db_->query("INSERT INTO kernels (family, params, description, template_hash) VALUES (?1, ?2, ?3, ?4) "
               "ON CONFLICT (family, params, template_hash) DO NOTHING")
        .bind_all(kernel.family, params, kernel.description, kernel.template_hash)
        .run();
    auto q = db_->query("SELECT id FROM kernels WHERE family = ?1 AND params = ?2 AND template_hash = ?3");
    q.bind_all(kernel.family, params, kernel.template_hash);
    q.step();
    return q.integer(0);
}

namespace {
// The insert of put_binary and replace_binary; `on_conflict` says what becomes of a row
// already under the key.
#define SGEMM_DB_INSERT_BINARY(on_conflict)                                                                       \
    "INSERT INTO binaries (cache_key, kernel_id, arch, nvrtc_version, lowered_name, cubin, "                     \
    "registers, shared_bytes, stack_bytes, spill_store_bytes, spill_load_bytes, compile_ms, cubin_checksum, "    \
    "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, " SGEMM_DB_NOW ") "             \
    "ON CONFLICT (cache_key) " on_conflict

// A binary's checksum is kept as it came: made by to_binary from a fresh compile, or brought
// from another database or an export, where one that no longer matches its cubin stays
// evident. One that came without (a binary from before checksums) stays without: a checksum
// of its bytes now would vouch for damage done before.
bool insert_binary(sqlite::Connection& db, std::int64_t kernel, const Binary& b, const std::string& sql) {
    const std::optional<std::string> checksum =
        b.cubin_checksum.empty() ? std::nullopt : std::optional<std::string>(b.cubin_checksum);
    db.query(sql)
        .bind_all(b.cache_key, kernel, b.arch, b.nvrtc_version, b.lowered_name, b.cubin, b.registers, b.shared_bytes,
                  b.stack_bytes, b.spill_store_bytes, b.spill_load_bytes, b.compile_ms, checksum)
        .run();
    return db.changes() > 0;
}
}  // namespace

#define SGEMM_DB_REPLACE_BINARY                                                                                  \
    SGEMM_DB_INSERT_BINARY("DO UPDATE SET kernel_id = excluded.kernel_id, arch = excluded.arch, "                 \
                           "nvrtc_version = excluded.nvrtc_version, lowered_name = excluded.lowered_name, "       \
                           "cubin = excluded.cubin, registers = excluded.registers, "                             \
                           "shared_bytes = excluded.shared_bytes, stack_bytes = excluded.stack_bytes, "           \
                           "spill_store_bytes = excluded.spill_store_bytes, "                                     \
                           "spill_load_bytes = excluded.spill_load_bytes, compile_ms = excluded.compile_ms, "     \
                           "cubin_checksum = excluded.cubin_checksum, created_at = excluded.created_at")

bool TuningStore::put_binary(const Binary& b, bool* took_checksum) {
    if (took_checksum) *took_checksum = false;
    sqlite::Transaction t(*db_);
    const std::int64_t kernel = kernel_id(b.kernel);
    bool stored = insert_binary(*db_, kernel, b, SGEMM_DB_INSERT_BINARY("DO NOTHING"));
    if (!stored) {
        // The row kept under the key, read without counting a hit.
        std::optional<Binary> kept;
        {
            auto q = db_->query("SELECT " SGEMM_DB_KERNEL_COLUMNS ", " SGEMM_DB_BINARY_COLUMNS
                                " FROM binaries b JOIN kernels k ON k.id = b.kernel_id WHERE b.cache_key = ?1");
            q.bind(1, b.cache_key);
            if (q.step()) kept = read_binary(q, 4, read_kernel(q, 0));
        }
        // One key is one compile's inputs, so two cubins under it mean one was damaged.
        // Callers pass only cubins that match their checksum (cubin_problem), so a kept row
        // that does not, or that has no checksum and other bytes, gives way: else the winners
        // an import or a merge brings would be launched from bytes it never checked. But the
        // same bytes without a checksum would only erase the evidence of a damaged row. A kept
        // row without a checksum takes the one that comes with the same bytes, now vouched for.
        const bool vouched = !b.cubin_checksum.empty(), other_bytes = kept && kept->cubin != b.cubin;
        const bool damaged = kept && !cubin_problem(*kept).empty();
        if ((damaged && (vouched || other_bytes)) || (vouched && other_bytes && kept->cubin_checksum.empty())) {
            insert_binary(*db_, kernel, b, SGEMM_DB_REPLACE_BINARY);
            stored = true;
        } else if (vouched) {
            db_->query("UPDATE binaries SET cubin_checksum = ?2 WHERE cache_key = ?1 AND cubin_checksum IS NULL "
                       "AND cubin = ?3")
                .bind_all(b.cache_key, b.cubin_checksum, b.cubin)
                .run();
            if (took_checksum) *took_checksum = db_->changes() > 0;
        }
    }
    t.commit();
    return stored;
}

void TuningStore::replace_binary(const Binary& b) {
    sqlite::Transaction t(*db_);
    insert_binary(*db_, kernel_id(b.kernel), b, SGEMM_DB_REPLACE_BINARY);
    t.commit();
}

std::optional<Binary> TuningStore::find_binary(const std::string& cache_key) {
    std::optional<Binary> found;
    {
        auto q = db_->query("SELECT " SGEMM_DB_KERNEL_COLUMNS ", " SGEMM_DB_BINARY_COLUMNS
                            " FROM binaries b JOIN kernels k ON k.id = b.kernel_id WHERE b.cache_key = ?1");
        q.bind(1, cache_key);
        if (q.step()) found = read_binary(q, 4, read_kernel(q, 0));
    }
    if (found && !db_->read_only()) {
        sqlite::Transaction t(*db_);
        db_->query("UPDATE binaries SET hits = hits + 1, last_hit_at = " SGEMM_DB_NOW " WHERE cache_key = ?1")
            .bind(1, cache_key)
            .run();
        t.commit();
        ++found->hits;
    }
    return found;
}

std::optional<KernelRef> TuningStore::binary_kernel(const std::string& cache_key) {
    auto q = db_->query("SELECT " SGEMM_DB_KERNEL_COLUMNS " FROM binaries b JOIN kernels k ON k.id = b.kernel_id "
                        "WHERE b.cache_key = ?1");
    q.bind(1, cache_key);
    if (!q.step()) return std::nullopt;
    return read_kernel(q, 0);
}

void TuningStore::record_measurement(const Measurement& m) {
    sqlite::Transaction t(*db_);
    const std::int64_t kernel = kernel_id(m.kernel);
    auto q = db_->query("INSERT INTO measurements (device_id, " SGEMM_DB_SHAPE("") ", kernel_id, median_ms, min_ms, "
                        "max_ms, runs, error_norm, valid, invalid_reason, sm_clock_mhz, measured_at, tuner_version, "
                        "max_error_u, rms_error_u) "
                        "VALUES (?1, " SGEMM_DB_SHAPE_VALUES ", ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
                        "coalesce(nullif(?18, ''), " SGEMM_DB_NOW "), ?19, ?20, ?21)");
    bind_key(q, m.device_id, m.shape);
    q.bind(9, kernel).bind(10, m.median_ms).bind(11, m.min_ms).bind(12, m.max_ms).bind(13, m.runs);
    q.bind(14, m.error_norm).bind(15, static_cast<int>(m.valid)).bind(16, m.invalid_reason);
    q.bind(17, m.sm_clock_mhz).bind(18, m.measured_at).bind(19, m.tuner_version);
    q.bind(20, m.max_error_u).bind(21, m.rms_error_u);
    q.run();
    t.commit();
}

bool TuningStore::has_measurement(const Measurement& m) {
    auto q = db_->query("SELECT 1 FROM measurements x JOIN kernels k ON k.id = x.kernel_id "
                        "WHERE " SGEMM_DB_KEY_IS("x.") " AND k.family = ?9 AND k.params = ?10 "
                        "AND k.template_hash = ?11 AND x.measured_at = ?12 AND x.runs = ?13 AND x.median_ms IS ?14");
    bind_key(q, m.device_id, m.shape);
    q.bind(9, m.kernel.family).bind(10, params_text(m.kernel.params)).bind(11, m.kernel.template_hash);
    q.bind(12, m.measured_at).bind(13, m.runs).bind(14, m.median_ms);
    return q.step();
}

std::vector<Measurement> TuningStore::measurements(const std::string& device_id, const std::optional<ShapeKey>& shape) {
    auto q = db_->query(
        "SELECT x.device_id, " SGEMM_DB_SHAPE("x.") ", " SGEMM_DB_KERNEL_COLUMNS
        ", x.median_ms, x.min_ms, x.max_ms, x.runs, x.error_norm, x.valid, x.invalid_reason, x.sm_clock_mhz, "
        "x.measured_at, x.tuner_version, x.tflops, x.max_error_u, x.rms_error_u FROM measurements x JOIN kernels k ON k.id = x.kernel_id "
        "WHERE (?1 = '' OR x.device_id = ?1) AND (?2 IS NULL OR (x.m = ?2 AND x.n = ?3 AND x.k = ?4 AND "
        "x.trans_a = ?5 AND x.trans_b = ?6 AND x.precision = ?7 AND x.alignment = ?8)) "
        "ORDER BY x.device_id, " SGEMM_DB_SHAPE("x.") ", x.valid DESC, x.median_ms IS NULL, x.median_ms, x.id");
    if (shape)
        bind_key(q, device_id, *shape);
    else
        q.bind(1, device_id);
    std::vector<Measurement> out;
    while (q.step()) {
        Measurement m;
        m.device_id = q.text(0);
        m.shape = read_shape(q, 1);
        m.kernel = read_kernel(q, 8);
        m.median_ms = q.optional_real(12);
        m.min_ms = q.optional_real(13);
        m.max_ms = q.optional_real(14);
        m.runs = static_cast<int>(q.integer(15));
        m.error_norm = q.optional_real(16);
        m.valid = q.integer(17) != 0;
        m.invalid_reason = q.text(18);
        if (const auto clock = q.optional_integer(19)) m.sm_clock_mhz = static_cast<int>(*clock);
        m.measured_at = q.text(20);
        m.tuner_version = q.text(21);
        m.tflops = q.optional_real(22);
        m.max_error_u = q.optional_real(23);
        m.rms_error_u = q.optional_real(24);
        out.push_back(std::move(m));
    }
    return out;
}

void TuningStore::put_winner(const Winner& w) {
    sqlite::Transaction t(*db_);
    const std::int64_t kernel = kernel_id(w.kernel);
    auto q = db_->query("INSERT INTO winners (device_id, " SGEMM_DB_SHAPE("") ", kernel_id, binary_key, ms, "
                        "cublas_ms, tolerance, provenance, tuned_at, narrowed_by) VALUES (?1, " SGEMM_DB_SHAPE_VALUES ", ?9, "
                        "nullif(?10, ''), ?11, ?12, ?13, ?14, coalesce(nullif(?15, ''), " SGEMM_DB_NOW "), ?16) "
                        "ON CONFLICT (device_id, " SGEMM_DB_SHAPE("") ") DO UPDATE SET kernel_id = excluded.kernel_id, "
                        "binary_key = excluded.binary_key, ms = excluded.ms, cublas_ms = excluded.cublas_ms, "
                        "tolerance = excluded.tolerance, provenance = excluded.provenance, tuned_at = excluded.tuned_at, "
                        "narrowed_by = excluded.narrowed_by");
    bind_key(q, w.device_id, w.shape);
    q.bind(9, kernel).bind(10, w.binary_key).bind(11, w.ms).bind(12, w.cublas_ms).bind(13, w.tolerance);
    q.bind(14, w.provenance).bind(15, w.tuned_at).bind(16, w.narrowed_by);
    q.run();
    t.commit();
}

std::optional<Winner> TuningStore::find_winner(const std::string& device_id, const ShapeKey& shape) {
    auto q = db_->query("SELECT " SGEMM_DB_WINNER_COLUMNS SGEMM_DB_WINNER_FROM "WHERE " SGEMM_DB_KEY_IS("w."));
    bind_key(q, device_id, shape);
    if (!q.step()) return std::nullopt;
    return read_winner(q);
}

std::vector<Winner> TuningStore::winners(const std::string& device_id) {
    auto q = db_->query("SELECT " SGEMM_DB_WINNER_COLUMNS SGEMM_DB_WINNER_FROM
                        "WHERE ?1 = '' OR w.device_id = ?1" SGEMM_DB_WINNER_ORDER);
    q.bind(1, device_id);
    std::vector<Winner> out;
    while (q.step()) out.push_back(read_winner(q));
    return out;
}

std::vector<WinnerWithBinary> TuningStore::winners_with_binaries(const std::string& device_id) {
    auto q = db_->query("SELECT " SGEMM_DB_WINNER_COLUMNS ", " SGEMM_DB_BINARY_COLUMNS SGEMM_DB_WINNER_FROM
                        "LEFT JOIN binaries b ON b.cache_key = w.binary_key WHERE w.device_id = ?1"
                        SGEMM_DB_WINNER_ORDER);
    q.bind(1, device_id);
    std::vector<WinnerWithBinary> out;
    while (q.step()) {
        WinnerWithBinary wb{read_winner(q), std::nullopt};
        if (!q.is_null(kWinnerColumns)) wb.binary = read_binary(q, kWinnerColumns, wb.winner.kernel);
        out.push_back(std::move(wb));
    }
    return out;
}

namespace {

// Writes each miss into its recorder's row; on a row that exists, `count_update` says what
// the count becomes (SQL over count and excluded.count). Returns the rows written.
int upsert_misses(sqlite::Connection& db, const std::vector<Miss>& misses, const std::string& recorder,
                  const char* count_update) {
    sqlite::Transaction t(db);
    int written = 0;
    for (const Miss& miss : misses) {
        auto q = db.query(std::string("INSERT INTO misses (device_id, " SGEMM_DB_SHAPE("") ", recorder, count, first_seen, "
                                      "last_seen) VALUES (?1, " SGEMM_DB_SHAPE_VALUES ", ?9, ?10, coalesce(nullif(?11, ''), "
                                      SGEMM_DB_NOW "), coalesce(nullif(?12, ''), " SGEMM_DB_NOW ")) "
                                      "ON CONFLICT (device_id, " SGEMM_DB_SHAPE("") ", recorder) DO UPDATE SET count = ") +
                          count_update +
                          ", first_seen = min(first_seen, excluded.first_seen), "
                          "last_seen = max(last_seen, excluded.last_seen) "
                          "WHERE count != " + count_update + " OR first_seen > excluded.first_seen "
                          "OR last_seen < excluded.last_seen");
        bind_key(q, miss.device_id, miss.shape);
        q.bind(9, recorder.empty() ? miss.recorder : recorder).bind(10, miss.count);
        q.bind(11, miss.first_seen).bind(12, miss.last_seen);
        q.run();
        written += db.changes() > 0;
    }
    t.commit();
    return written;
}

}  // namespace

void TuningStore::record_misses(const std::vector<Miss>& misses, const std::string& recorder) {
    if (recorder.empty()) throw DbError("misses need a recorder: the id of whoever counted them");
    upsert_misses(*db_, misses, recorder, "count + excluded.count");
}

namespace {

// The recorder whose name ends in `suffix` (its writer's) among `device`'s rows in this file,
// or "". Where the writer has several recorders here (a merge brought back the one it had
// before its device was pruned), the most recent: the older one's counts may also stand,
// larger, in a file it was merged into. A scan of the device's rows: about 20 ms at 60,000
// rows, well under 1 ms at the thousands an engine's shapes make.
std::string recorder_of_writer(sqlite::Connection& db, const std::string& device, const std::string& suffix) {
    auto q = db.query("SELECT recorder FROM misses WHERE device_id = ?1 AND length(recorder) > length(?2) AND "
                      "substr(recorder, -length(?2)) = ?2 ORDER BY last_seen DESC, recorder LIMIT 1");
    q.bind(1, device).bind(2, suffix);
    return q.step() ? q.text(0) : std::string();
}

}  // namespace

void TuningStore::record_misses_as(const std::vector<Miss>& misses, const std::string& writer) {
    if (writer.empty()) throw DbError("misses need a writer: the boot and file that counted them");
    const std::string suffix = "@" + writer;
    sqlite::Transaction t(*db_);  // BEGIN IMMEDIATE: the lookup and the adds of one writer at a time
    std::map<std::string, std::string> recorder_of_device;
    std::vector<Miss> named = misses;
    for (Miss& miss : named) {
        auto [at, added] = recorder_of_device.try_emplace(miss.device_id);
        if (added) {
            at->second = recorder_of_writer(*db_, miss.device_id, suffix);
            if (at->second.empty()) at->second = new_miss_recorder() + suffix;
        }
        miss.recorder = at->second;
    }
    upsert_misses(*db_, named, "", "count + excluded.count");
    t.commit();
}

int TuningStore::merge_misses(const std::vector<Miss>& misses) {
    for (const Miss& miss : misses)
        if (miss.recorder.empty()) throw DbError("a merged miss needs its recorder");
    return upsert_misses(*db_, misses, "", "max(count, excluded.count)");
}

std::vector<Miss> TuningStore::misses(const std::string& device_id) {
    auto q = db_->query("SELECT device_id, " SGEMM_DB_SHAPE("") ", sum(count) AS total, min(first_seen), max(last_seen) "
                        "FROM misses WHERE ?1 = '' OR device_id = ?1 GROUP BY device_id, " SGEMM_DB_SHAPE("")
                        " ORDER BY total DESC, device_id, " SGEMM_DB_SHAPE(""));
    q.bind(1, device_id);
    std::vector<Miss> out;
    while (q.step()) out.push_back(Miss{q.text(0), read_shape(q, 1), q.integer(8), q.text(9), q.text(10), ""});
    return out;
}

std::vector<Miss> TuningStore::misses_by_recorder() {
    auto q = db_->query("SELECT device_id, " SGEMM_DB_SHAPE("") ", count, first_seen, last_seen, recorder FROM misses "
                        "ORDER BY device_id, " SGEMM_DB_SHAPE("") ", recorder");
    std::vector<Miss> out;
    while (q.step())
        out.push_back(Miss{q.text(0), read_shape(q, 1), q.integer(8), q.text(9), q.text(10), q.text(11)});
    return out;
}

std::string TuningStore::new_miss_recorder() {
    std::random_device random;  // the kernel's entropy: two processes started together differ
    std::string id;
    char hex[9];
    for (int i = 0; i < 4; ++i) {
        std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(random()));
        id += hex;
    }
    return id;
}

}  // namespace sgemm
