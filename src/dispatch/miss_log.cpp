#include "src/dispatch/miss_log.h"

#include <sys/stat.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <utility>
#include <vector>

#include "db/store.h"
#include "src/util/error.h"

namespace sgemm {

namespace {

// `path` against today's working directory: the log writes long after create, and an engine
// may change directory in between (a daemon moves to /). Kept as given if that fails.
std::string fixed_path(const std::string& path) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    return ec ? path : absolute.string();
}

// The recorder this process's misses in the file at `path` count under
// (TuningStore::record_misses): one random id for the process, which all its handles share
// (a recorder's rows only grow, and they add), and the file's identity, so that a file
// replaced under the same path (a new inode) starts a recorder of its own instead of
// continuing one whose counts the old file also holds. One row per process and shape: not
// one per handle. Called with the file open, so it exists; if it cannot be read, throws
// (the counts wait for the next write) rather than name a recorder of no file.
std::string recorder_of(const std::string& path) {
    static const std::string process = TuningStore::new_miss_recorder();
    struct stat file {};
    if (stat(path.c_str(), &file) != 0) throw Error("cannot read the identity (device, inode) of " + path);
    char identity[48];
    std::snprintf(identity, sizeof identity, "@%llx:%llx", static_cast<unsigned long long>(file.st_dev),
                  static_cast<unsigned long long>(file.st_ino));
    return process + identity;
}

}  // namespace

MissLog::MissLog(const PlanTable& plans, std::string db_path, DeviceFingerprint device,
                 std::chrono::milliseconds interval)
    : plans_(plans), db_path_(fixed_path(db_path)), device_(std::move(device)), interval_(interval) {
    thread_ = std::thread([this] { run(); });
}

MissLog::~MissLog() { stop(); }

std::string MissLog::stop() noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopped_) return "";
        stop_ = stopped_ = true;
    }
    wake_.notify_all();
    thread_.join();
    flush();
    return last_error();
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
    try {
        // Counts are taken off the plans as they are read; a failure at any point (even to
        // allocate) puts back what was taken.
        std::vector<Miss> batch;
        for (const Plan* plan : plans_.plans()) {
            if (plan->unwritten_misses.load(std::memory_order_relaxed) == 0) continue;
            taken.emplace_back(plan, 0);  // room first, then the count: none is lost if this throws
            taken.back().second = plan->unwritten_misses.exchange(0, std::memory_order_relaxed);
            batch.push_back(Miss{device_.id(), plan->key, taken.back().second, "", ""});  // first and last seen: now
        }
        if (batch.empty()) return 0;
        TuningStore store(db_path_, OpenMode::ReadWrite);  // creates the file: recorder_of reads its identity
        store.add_device(device_);
        store.record_misses(batch, recorder_of(db_path_));
    } catch (const std::exception& e) {
        try {
            error = std::string("writing misses to ") + db_path_ + ": " + e.what();
        } catch (...) {
            error = "writing misses: out of memory";
        }
    }
    std::int64_t calls = 0;
    for (const auto& [plan, n] : taken) {
        if (!error.empty()) plan->unwritten_misses.fetch_add(n, std::memory_order_relaxed);  // next time
        calls += n;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    last_error_.swap(error);
    if (!last_error_.empty()) return 0;
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
    return last_error_;
}

}  // namespace sgemm
