// The tuning database: one SQLite file (WAL mode) that the tuner writes, dispatch reads
// and people inspect with sgemm-db. Safe for many processes at once: each logical write is
// one transaction that takes the write lock up front and waits up to the busy timeout for
// it, and a crash mid-write leaves the file as it was before that write.
//
// Opening checks the file before anything is written to it: a file that is not SQLite, a
// foreign SQLite database, a corrupt file, a newer schema, or a read-only file opened for
// writing is refused with a DbError that says so. An older schema is upgraded (ReadWrite)
// by applying the pending migrations of db/migrations/ in one transaction.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/records.h"
#include "db/sqlite.h"

namespace sgemm {

enum class OpenMode {
    // The tuner, sgemm-db's writing commands: creates the file and its folder. A new file is
    // made whole with its schema, or not at all (db/publish.h).
    ReadWrite,
    // Dispatch, sgemm-db's reading commands, a merge's source: the file must exist, and is
    // never written. One of an older schema is read from a copy in memory brought to this
    // schema (opened_version() says which it had), so that a newer reader works on a file it
    // may not or should not write (a database deployed read-only, or another's).
    ReadOnly,
    // A store in memory that takes writes and never writes the file: a copy of the file
    // brought to this schema, or an empty one where there is no file yet. To try a change that
    // the file is to get, or be made for, only if the change takes (an import into no database,
    // or into one of an older schema, which the change would upgrade).
    Trial,
    // A new, empty database in memory that never reads nor writes the file, whatever is there
    // by now: a first write of a file found missing, made whole by publish_as_new_file (a
    // Trial would read a file that another process made meanwhile, whole, to no use).
    New,
};

// An id or prefix that names no device, or more than one: a user error.
struct UnknownDeviceError : Error {
    using Error::Error;
};

class TuningStore {
public:
    static constexpr std::chrono::milliseconds kDefaultBusyTimeout{5000};

    explicit TuningStore(const std::string& path, OpenMode mode = OpenMode::ReadWrite,
                         std::chrono::milliseconds busy_timeout = kDefaultBusyTimeout);

    const std::string& path() const { return db_->path(); }
    int schema_version();
    // The version the file had when opened, before any upgrade: 0 for a new file.
    int opened_version() const { return opened_version_; }
    // A ReadOnly store read from a copy of the file alone (a user who may not write it, its
    // folder or SQLite's files beside it): the size of the -wal file there, whose commits (a
    // writer's at work, or one that stopped before its checkpoint) the copy may lack; else 0.
    std::int64_t unread_wal_bytes() const { return unread_wal_bytes_; }
    // For a Trial store where there is no file yet: writes it as the new file `path`, whole or
    // not at all, and returns true; false, having written nothing, where that cannot be done
    // (a file there by now, and the rest that db/publish.h lists): the change is then to be
    // made to the file opened for writing. A write that fails throws, and leaves no file.
    // `before_copy` is publish_new_database's (db/publish.h): a last write into this store
    // that names the file it is about to be copied into.
    bool publish_as_new_file(const std::string& path,
                             const std::function<void(const std::string& file)>& before_copy = {});

    // --- devices ---
    // Adds the device if new; returns its id. Idempotent.
    std::string add_device(const DeviceFingerprint& device);
    std::vector<DeviceFingerprint> devices();  // by GPU name, then id
    std::optional<DeviceFingerprint> find_device(const std::string& id);
    // Removes the device row stored under `id`, and with it (the schema cascades) its winners,
    // measurements and misses.
    void remove_device(const std::string& id);
    // Every device row with the id it is stored under, which its rows refer to: for a row
    // edited by hand that is not the id its fields give (DeviceFingerprint::id). By GPU
    // name, then id.
    struct DeviceRow {
        std::string stored_id;
        DeviceFingerprint fields;
        // "\n  ID  FIELDS", escaped: the row's line in a message that lists devices to pick from.
        std::string listing_line() const;
    };
    std::vector<DeviceRow> device_rows();
    // listing_line's for an id that rows name with no device row (device_ids_without_row).
    static std::string listing_line_without_row(const std::string& id);
    // Device rows whose id is not the one their fields give (edited by hand): every lookup
    // computes a device's id from its fields, so their winners, measurements and misses are
    // found by none. Each with its count of winners.
    struct EditedDeviceRow : DeviceRow {
        std::int64_t winners = 0;
    };
    std::vector<EditedDeviceRow> edited_device_rows();
    // Rows that name a device or kernel row that is missing: a delete in a shell that does not
    // enforce the schema's foreign keys (sqlite3's default) leaves them behind, and no lookup
    // or tune mends them. (A winner whose binary row is missing is found, and judged alone:
    // a re-tune compiles its binary again.)
    std::int64_t dangling_rows();
    // The winners (of `device_id`, or of every device where it is empty) that no lookup finds,
    // their device or kernel row missing: such dangling rows.
    std::int64_t dangling_winners(const std::string& device_id);
    // Of those, the ones whose kernel row is missing: every winner query joins its kernel, so
    // these are the winners that no list shows (one whose device row is missing is listed).
    std::int64_t winners_of_missing_kernels(const std::string& device_id);
    // The device ids that winners, measurements or misses name with no device row (deleted by
    // hand), in order: stats lists them, verify counts them, and --device takes them.
    std::vector<std::string> device_ids_without_row();
    // The id that `id_or_prefix` names (a full id, or a prefix that only one id starts
    // with), of a device row or of rows without one; throws UnknownDeviceError listing the
    // devices otherwise.
    std::string resolve_device(const std::string& id_or_prefix);

    // --- the binary cache ---
    // Stores a compiled kernel, whose cubin matches its checksum if it has one, under
    // binary.cache_key. An existing row is kept, but one damaged (db/verify.h's
    // cubin_problem), or one without a checksum and with other bytes where binary has one,
    // is replaced; one kept without a checksum takes binary's when its cubin is the same
    // bytes. True when binary's bytes were stored (new, or over a row replaced);
    // `took_checksum`, when given, says whether a kept row took binary's checksum.
    bool put_binary(const Binary& binary, bool* took_checksum = nullptr);
    // Stores a fresh compile over the row of the same key whatever it holds (the kernel
    // cache's rows that cannot serve this GPU, which put_binary may keep); the winners that
    // name the key keep it.
    void replace_binary(const Binary& binary);
    // The cached binary for `cache_key`, if any. On a writable store a found binary's hit
    // count goes up by one (the figure `sgemm-db stats` reports).
    std::optional<Binary> find_binary(const std::string& cache_key);
    // The kernel that the binary under `cache_key` was stored for, if there is one: what
    // put_binary keeps when another comes under the key. Counts no hit and reads no cubin.
    std::optional<KernelRef> binary_kernel(const std::string& cache_key);

    // --- measurements ---
    // Appends one candidate's result. The device must have been added.
    void record_measurement(const Measurement& measurement);
    // True when a measurement with the same device, shape, kernel, time stamp, runs and
    // median is stored already (merges skip those).
    bool has_measurement(const Measurement& measurement);
    // Measurements of a device (all devices when empty), of one shape when given: valid
    // ones fastest first, then invalid ones.
    std::vector<Measurement> measurements(const std::string& device_id = {},
                                          const std::optional<ShapeKey>& shape = {});

    // --- winners ---
    // Stores the winner for its device and shape, replacing any earlier one. Its binary, if
    // any, must have been put first.
    void put_winner(const Winner& winner);
    std::optional<Winner> find_winner(const std::string& device_id, const ShapeKey& shape);
    // Winners of a device (all devices when empty), by device and shape.
    std::vector<Winner> winners(const std::string& device_id = {});
    // What dispatch loads at start-up: every winner of the device with its binary.
    std::vector<WinnerWithBinary> winners_with_binaries(const std::string& device_id);

    // --- misses ---
    // Each recorder counts apart, so that merging a file twice counts its calls once
    // (migrations/0003_miss_recorders.sql). Rows: one per recorder and shape key.
    // Adds each miss's count to its row of `recorder` (creating it), in one transaction.
    // Empty first_seen / last_seen mean now. Each miss's device must have been added.
    void record_misses(const std::vector<Miss>& misses, const std::string& recorder);
    // What dispatch writes: adds each miss under the recorder that `writer` (the machine's
    // boot and the file, as src/dispatch/miss_log.h names them) holds for the miss's device
    // in this file: the recorder of rows it wrote here before, else a new one,
    // new_miss_recorder() + "@" + writer. A recorder is thus found only in the file whose
    // writer made it, or in a copy of that file's rows: a database copied onto the file from
    // elsewhere, a clone on another machine (another boot) or a device pruned from the file
    // starts a new one. One transaction, so processes that write at once agree on it.
    void record_misses_as(const std::vector<Miss>& misses, const std::string& writer);
    // A merge's write: each miss's row of its own recorder keeps the larger count (a
    // recorder's count only grows, so the larger is the later), the earlier first_seen and the
    // later last_seen. Returns how many rows it added or updated.
    int merge_misses(const std::vector<Miss>& misses);
    // Misses of a device (all devices when empty), summed over the recorders, most frequent
    // first: what sgemm-tune --from-misses tunes.
    std::vector<Miss> misses(const std::string& device_id = {});
    // The rows themselves, each with its recorder: what a merge copies.
    std::vector<Miss> misses_by_recorder();
    // A new random id: two processes or machines never draw the same.
    static std::string new_miss_recorder();

    // The connection, for the rest of db/ (merge, prune, stats, verify) and the tests.
    sqlite::Connection& connection() { return *db_; }

private:
    std::int64_t kernel_id(const KernelRef& kernel);  // adds the kernel if new

    std::unique_ptr<sqlite::Connection> db_;
    int opened_version_ = 0;
    std::int64_t unread_wal_bytes_ = 0;
};

// The device rows of earlier builds of `gpu`'s GPU (earlier_build): the same GPU before an
// upgrade of sgemm, its driver, CUDA or NVRTC, whose rows this build's dispatch does not read.
// By id.
std::vector<TuningStore::DeviceRow> earlier_builds_of(TuningStore& store, const DeviceFingerprint& gpu);
// "device 1a2b3c4d (sgemm 0.3.0)": such a row in a message, by the short id sgemm-db list
// shows and what differs from `gpu` (build_differences).
std::string earlier_build_label(const TuningStore::DeviceRow& row, const DeviceFingerprint& gpu);

// Throws the DbError that opening `path` for writing would, but creates, upgrades and changes
// no data: for a command that cannot start its work (no GPU is visible, or dispatch about to
// record misses) to report its database's problems first. It reads the file as a reader who
// may write it does (which, closing last, checkpoints a crashed writer's -wal file). Returns
// the file's schema version: 0 where there is no tuning database yet (no file, an empty one).
int check_writable_database(const std::string& path,
                            std::chrono::milliseconds busy_timeout = TuningStore::kDefaultBusyTimeout);

}  // namespace sgemm
