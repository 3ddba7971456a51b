// Misses, off the hot path: a call whose shape key has no exact winner adds one to its
// plan's counter (Plan::unwritten_misses); this writes the counts to the database's misses
// table in one transaction every `interval` from a background thread, and once more when
// destroyed. A failed write keeps the counts for the next one and says why in last_error().
#pragma once
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "db/records.h"
#include "src/dispatch/plan_table.h"

namespace sgemm {

// What a database file is, for naming who writes misses to it.
struct FileIdentity {
    std::uint64_t device = 0, inode = 0;
    bool has_birth_time = false;  // the filesystem says when the file was created
    std::int64_t birth_seconds = 0;
    std::uint32_t birth_nanoseconds = 0;
};

// The identity of the file at `path`; throws sgemm::Error when it cannot be read.
FileIdentity file_identity(const std::string& path);

// This boot of this machine (/proc/sys/kernel/random/boot_id), or "" where it cannot be read.
std::string machine_boot();

// Who writes misses to `file` (TuningStore::record_misses_as, which finds or makes the
// recorder this writer counts under in the file): `boot`, and the file's device, inode and
// birth time. Every process of one boot on one file is one writer, so the misses table grows
// by a row per shape key, not per process start (an engine started once per request, with
// prefill shapes that vary, would otherwise add a row per start and shape). The boot keeps
// apart clones of one disk on other machines, which keep the file's device, inode and birth
// time; the birth time keeps apart a later file on the same inode number (a database
// deployed by rename, say), whose rows may be an earlier copy of this one's. Where the boot
// or the birth time is unknown, the writer is `process` (a random id) and the file's device
// and inode: each process counts apart, and rows grow per process start again.
std::string miss_writer(const FileIdentity& file, const std::string& boot, const std::string& process);

// What a write does where the database is not there. A handle that was created on the file
// (every one but those with without_database) refuses: the file was moved or removed since
// (a deployment's swap, a clean-up), and one made anew with misses alone would let the next
// create find a database with no winners and send every shape to the fallback, with no
// error. A handle created without a database makes the file with its first write, whole:
// the file appears with those misses, or not at all where the write fails.
enum class MissingDatabase { create, refuse };

class MissLog {
public:
    // A relative `db_path` is taken against the working directory now, not at each write.
    MissLog(const PlanTable& plans, std::string db_path, DeviceFingerprint device, std::chrono::milliseconds interval,
            MissingDatabase missing);
    ~MissLog();  // stop(), if not called yet

    // Stops the thread and writes what is left; returns why that write failed, or "".
    // Later calls do nothing and return "". Never throws.
    std::string stop() noexcept;
    MissLog(const MissLog&) = delete;
    MissLog& operator=(const MissLog&) = delete;

    // Writes the counts now; returns how many calls it wrote (0 when the write failed:
    // last_error() says why). Never throws.
    std::int64_t flush() noexcept;

    std::int64_t pending() const;  // counted, not yet written
    std::int64_t written() const { return written_; }
    std::string last_error() const;  // of the last write that failed; "" after one that worked

private:
    void run();
    // pthread_create's entry: runs `log`'s run(); an exception out of it ends the process.
    static void* run_thread(void* log) noexcept;

    const PlanTable& plans_;
    const std::string db_path_;
    const DeviceFingerprint device_;
    const std::chrono::milliseconds interval_;
    const MissingDatabase missing_;
    std::atomic<std::int64_t> written_{0};
    std::mutex flushing_;       // one flush at a time: the thread's, destroy's, an explicit one
    // Made at construction: a write that runs out of memory has no room to make it then.
    std::string out_of_memory_error_;
    mutable std::mutex mutex_;  // guards stop_, last_error_ and last_write_out_of_memory_
    std::condition_variable wake_;
    bool stop_ = false;
    bool stopped_ = false;  // stop() ran
    std::string last_error_;
    bool last_write_out_of_memory_ = false;  // the last write failed so; its error is out_of_memory_error_
    // A pthread, not a std::thread: std::thread puts its callable in a heap block that only
    // the new thread points to, and a child forked from this process, which has no copy of
    // that thread, has the block reported as a leak by an engine's LeakSanitizer build.
    // pthread_create is handed `this` and allocates nothing that the heap checker tracks.
    // A child forked while a write runs still has that write's objects reported: only the
    // writer's stack points to them.
    pthread_t thread_{};
};

}  // namespace sgemm
