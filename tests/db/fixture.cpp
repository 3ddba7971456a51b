#include "tests/db/fixture.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "db/schema.h"
#include "src/families/registry.h"
#include "src/records/kernel_records.h"

namespace sgemm::testing {

TempDir::TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sgemm-db-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw Error("mkdtemp failed");
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
}

DeviceFingerprint h200(int variant) {
    DeviceFingerprint d;
    d.gpu_name = "NVIDIA H200";
    d.cc_major = 9;
    d.cc_minor = 0;
    d.sm_count = 132;
    d.memory_bytes = 150754820096;
    d.driver_version = 13000 + 10 * variant;
    d.runtime_version = 13000;
    d.nvrtc_version = "13.0";
    return d;
}

Binary naive_binary() {
    static const Binary binary = [] {
        const Family& family = find_family("naive");
        return to_binary(compile_kernel(family, family.defaults, Arch{90}), kernel_ref(family, family.defaults));
    }();
    return binary;
}

ShapeKey shape(int M, int N, int K) {
    ShapeKey s;
    s.M = M;
    s.N = N;
    s.K = K;
    return s;
}

Winner winner(const std::string& device_id, const ShapeKey& shape, double ms, const Binary* binary) {
    Winner w;
    w.device_id = device_id;
    w.shape = shape;
    w.kernel = binary ? binary->kernel : KernelRef::cublas();
    w.binary_key = binary ? binary->cache_key : "";
    w.ms = ms;
    w.cublas_ms = 1.0;
    w.tolerance = 1e-4;
    w.provenance = "test";
    return w;
}

Measurement measurement(const std::string& device_id, const ShapeKey& shape, double median_ms) {
    Measurement m;
    m.device_id = device_id;
    m.shape = shape;
    m.kernel = naive_binary().kernel;
    m.median_ms = median_ms;
    m.min_ms = median_ms * 0.9;
    m.max_ms = median_ms * 1.2;
    m.runs = 20;
    m.error_norm = 1e-7;
    m.max_error_u = 3.25;
    m.rms_error_u = 0.4375;
    m.sm_clock_mhz = 1980;
    return m;
}

std::string fill_sample(TuningStore& store) {
    const std::string id = store.add_device(h200());
    const Binary binary = naive_binary();
    store.put_binary(binary);
    for (int M : {1, 8, 32}) {
        store.record_measurement(measurement(id, shape(M, 4096, 4096), 0.05 * M));
        store.put_winner(winner(id, shape(M, 4096, 4096), 0.05 * M, &binary));
    }
    Measurement rejected = measurement(id, shape(8, 4096, 4096), 0);
    rejected.median_ms = rejected.min_ms = rejected.max_ms = std::nullopt;
    rejected.max_error_u = rejected.rms_error_u = std::nullopt;
    rejected.valid = false;
    rejected.invalid_reason = "wrong result: max error 3.1 above tolerance";
    store.record_measurement(rejected);
    // cuBLAS's own winner, at 55 TFLOPS: a time no H200 could reach is refused by import and merge.
    Winner cublas_winner = winner(id, shape(4096, 4096, 4096), 2.5, nullptr);
    cublas_winner.cublas_ms = 2.5;
    store.put_winner(cublas_winner);
    store.record_misses({Miss{id, shape(16, 4096, 4096), 5, "", "", ""}, Miss{id, shape(2, 14336, 4096), 1, "", "", ""}}, "sample");
    return id;
}

std::string write_sample(const TempDir& dir, const std::string& name) {
    const std::string path = dir.file(name);
    TuningStore store(path);
    fill_sample(store);
    return path;
}

std::int64_t user_version(const std::string& path) {
    // Immutable: a read-only connection would leave -wal and -shm files beside a WAL file.
    sqlite::Connection db(path, sqlite::Access::Immutable, std::chrono::milliseconds(0));
    return db.integer("PRAGMA user_version");
}

void insert_device(sqlite::Connection& db, const DeviceFingerprint& device) {
    db.query("INSERT INTO devices VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
        .bind_all(device.id(), device.gpu_name, device.cc_major, device.cc_minor, device.sm_count,
                  device.memory_bytes, device.driver_version, device.runtime_version, device.nvrtc_version,
                  device.library_version)
        .run();
}

std::string file_of_version(const TempDir& dir, int v, const DeviceFingerprint& device, const std::string& name) {
    const std::string path = dir.file(name);
    sqlite::Connection db(path, sqlite::Access::ReadWrite, std::chrono::milliseconds(1000));
    if (v >= 1) db.exec("PRAGMA journal_mode = WAL");  // as every version of sgemm leaves its files
    migrate(db, v);
    if (v >= 1) insert_device(db, device);
    return path;
}

std::string bytes_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string listing(const std::string& folder) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(folder))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    std::string lines;
    for (const std::string& name : names) lines += name + "\n";
    return lines;
}

ChildProcess::ChildProcess(const std::function<void()>& body) {
    std::fflush(nullptr);  // or the child flushes the parent's buffered output again
    pid_ = fork();
    if (pid_ < 0) throw Error("fork failed");
    if (pid_ > 0) return;
    int status = 0;
    try {
        body();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", getpid(), e.what());
        status = 1;
    }
    std::fflush(nullptr);
    _exit(status);  // no atexit handlers, no destructors of the parent's objects
}

ChildProcess::~ChildProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
}

int ChildProcess::wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

bool ChildProcess::running() const {
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
}

void ChildProcess::kill(int signal) { ::kill(pid_, signal); }

int in_child(const std::function<void()>& body) { return ChildProcess(body).wait(); }

}  // namespace sgemm::testing
