#include "src/dispatch/miss_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>
#include <vector>

#include "db/publish.h"
#include "db/store.h"
#include "src/util/error.h"
#include "src/util/text.h"

namespace sgemm {

namespace {

// `path` against today's working directory: the log writes long after create, and an engine
// may change directory in between (a daemon moves to /). Kept as given if that fails.
std::string fixed_path(const std::string& path) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    return ec ? path : absolute.string();
}

// Who writes misses to the file at `path` (TuningStore::record_misses_as). Called with the
// file open, so it exists; if it cannot be read, throws (the counts wait for the next write)
// rather than name a writer of no file.
std::string writer_of(const std::string& path) {
    // Never destroyed: a process that exits without destroying its handle leaves the flush
    // thread running, and exit's static destructors would free these under a flush.
    static const std::string& boot = *new std::string(machine_boot());
    static const std::string& process = *new std::string(TuningStore::new_miss_recorder());
    // The pid keeps a child forked after the first write apart from its parent.
    return miss_writer(file_identity(path), boot, process + "." + std::to_string(getpid()));
}

// Makes the database at `path`, which was not there, whole with `device` and `misses`
// (db/publish.h): a write that fails (a full disk) leaves no file, where one made in place
// would be left an empty tuning database. False, having written nothing, where the file must
// be written in place: another process made it meanwhile, and the rest publish_as_new_file
// lists.
bool write_new_database(const std::string& path, const DeviceFingerprint& device, const std::vector<Miss>& misses) {
    TuningStore trial(path, OpenMode::New);
    trial.add_device(device);
    // Recorded under the writer of the file they are copied into, which the link puts at
    // `path` with its identity: the next write, in place, finds the same recorder.
    try {
        return trial.publish_as_new_file(path,
                                         [&](const std::string& file) { trial.record_misses_as(misses, writer_of(file)); });
    } catch (const UnsyncedNewDatabase&) {
        // The file is at `path` with the misses; a power cut may lose it, as it may lose an
        // in-place write's last commits (synchronous = NORMAL). Written: kept for the next
        // write, they would count twice.
        return true;
    }
}

}  // namespace

std::string machine_boot() {
    std::ifstream file("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(file, id);
    return file ? id : std::string();
}

FileIdentity file_identity(const std::string& path) {
    FileIdentity file;
    struct statx x {};
    // AT_STATX_SYNC_AS_STAT: what stat(2) would say. glibc emulates statx where the kernel
    // lacks it, but a container's seccomp filter may still refuse it (EPERM): then stat,
    // without a birth time.
    if (statx(AT_FDCWD, path.c_str(), AT_STATX_SYNC_AS_STAT, STATX_INO | STATX_BTIME, &x) == 0 &&
        (x.stx_mask & STATX_INO) != 0) {
        file.device = makedev(x.stx_dev_major, x.stx_dev_minor);
        file.inode = x.stx_ino;
        file.has_birth_time = (x.stx_mask & STATX_BTIME) != 0 && (x.stx_btime.tv_sec != 0 || x.stx_btime.tv_nsec != 0);
        file.birth_seconds = x.stx_btime.tv_sec;
        file.birth_nanoseconds = x.stx_btime.tv_nsec;
        return file;
    }
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) throw Error("cannot read the identity (device, inode) of " + printable(path));
    file.device = st.st_dev;
    file.inode = st.st_ino;
    return file;
}

std::string miss_writer(const FileIdentity& file, const std::string& boot, const std::string& process) {
    char name[96];
    if (boot.empty() || !file.has_birth_time) {
        std::snprintf(name, sizeof name, "/%llx:%llx", static_cast<unsigned long long>(file.device),
                      static_cast<unsigned long long>(file.inode));
        return process + name;
    }
    std::snprintf(name, sizeof name, "/%llx:%llx:%lld.%09u", static_cast<unsigned long long>(file.device),
                  static_cast<unsigned long long>(file.inode), static_cast<long long>(file.birth_seconds),
                  file.birth_nanoseconds);
    return boot + name;
}

MissLog::MissLog(const PlanTable& plans, std::string db_path, DeviceFingerprint device,
                 std::chrono::milliseconds interval, MissingDatabase missing)
    : plans_(plans),
      db_path_(fixed_path(db_path)),
      device_(std::move(device)),
      interval_(interval),
      missing_(missing),
      out_of_memory_error_("writing misses to " + printable(db_path_) + ": out of memory") {
    // Named, with the code kept: create reports the host's refusal (EAGAIN) as HOST_ERROR.
    if (const int refused = pthread_create(&thread_, nullptr, &MissLog::run_thread, this))
        throw std::system_error(refused, std::generic_category(), "starting the thread that writes the misses");
}

void* MissLog::run_thread(void* log) noexcept {
    static_cast<MissLog*>(log)->run();
    return nullptr;
}

MissLog::~MissLog() { stop(); }

std::string MissLog::stop() noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopped_) return "";
        stop_ = stopped_ = true;
    }
    wake_.notify_all();
    pthread_join(thread_, nullptr);
    flush();
    // Moved out, not copied: a copy allocates, and out of memory in this noexcept call the
    // process would end. Nothing reads the message after the log has stopped.
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(last_write_out_of_memory_ ? out_of_memory_error_ : last_error_);
}

void MissLog::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
        lock.unlock();
        flush();
        lock.lock();
    }
}

std::int64_t MissLog::flush() noexcept {
    std::lock_guard<std::mutex> flushing(flushing_);
    std::vector<std::pair<const Plan*, std::int64_t>> taken;
    std::string error;
    bool out_of_memory = false;  // with no room left even for the message that says why
    try {
        // Counts are taken off the plans as they are read; a failure at any point (even to
        // allocate) puts back what was taken.
        std::vector<Miss> batch;
        for (const Plan* plan : plans_.plans()) {
            if (plan->unwritten_misses.load(std::memory_order_relaxed) == 0) continue;
            taken.emplace_back(plan, 0);  // room first, then the count: none is lost if this throws
            taken.back().second = plan->unwritten_misses.exchange(0, std::memory_order_relaxed);
            batch.push_back(Miss{device_.id(), plan->key, taken.back().second, "", "", ""});  // first and last seen: now
        }
        if (batch.empty()) return 0;
        struct stat file {};
        const bool missing = stat(db_path_.c_str(), &file) != 0 && errno == ENOENT;
        if (missing && missing_ == MissingDatabase::refuse)
            throw Error("the database is gone (moved or removed since create); the counts wait until it is back");
        if (!missing || !write_new_database(db_path_, device_, batch)) {
            TuningStore store(db_path_, OpenMode::ReadWrite);  // may make the file in place: writer_of reads its identity
            store.add_device(device_);
            store.record_misses_as(batch, writer_of(db_path_));
        }
    } catch (const std::exception& e) {
        try {
            error = "writing misses to " + printable(db_path_) + ": " + e.what();
        } catch (...) {
            // Not a message made here: that allocates, and a throw in this noexcept call would
            // end the process. last_error() gives the one made at construction.
            out_of_memory = true;
        }
    }
    const bool failed = out_of_memory || !error.empty();
    std::int64_t calls = 0;
    for (const auto& [plan, n] : taken) {
        if (failed) plan->unwritten_misses.fetch_add(n, std::memory_order_relaxed);  // next time
        calls += n;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    last_error_.swap(error);
    last_write_out_of_memory_ = out_of_memory;
    if (failed) return 0;
    written_ += calls;
    return calls;
}

std::int64_t MissLog::pending() const {
    std::int64_t n = 0;
    for (const Plan* plan : plans_.plans()) n += plan->unwritten_misses.load(std::memory_order_relaxed);
    return n;
}

std::string MissLog::last_error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_write_out_of_memory_ ? out_of_memory_error_ : last_error_;
}

}  // namespace sgemm
