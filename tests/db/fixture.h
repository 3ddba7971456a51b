// Building tuning databases for the tests: fingerprints, winners, measurements and real
// cubins (compiled by NVRTC, which needs no GPU), and temporary folders that clean up.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "db/store.h"

namespace sgemm::testing {

// A fresh folder under the system's temp dir, removed with everything in it.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// An H200-like device; `variant` changes the driver version, which makes another device.
DeviceFingerprint h200(int variant = 0);

// A real cubin of the ladder's naive kernel for sm_90 (compiled once per process).
Binary naive_binary();

// M x N x K, NN, fp32, 16-byte aligned.
ShapeKey shape(int M, int N, int K);

// A winner of `binary`'s kernel, or of cuBLAS when `binary` is null; cuBLAS takes 1 ms.
Winner winner(const std::string& device_id, const ShapeKey& shape, double ms, const Binary* binary);

// A valid measurement of the naive kernel.
Measurement measurement(const std::string& device_id, const ShapeKey& shape, double median_ms);

// Fills `store` with one device (h200()) holding winners of 3 decode shapes (naive kernel,
// with its binary) and one of cuBLAS, measurements of each and two misses. Returns the
// device's id.
std::string fill_sample(TuningStore& store);

// fill_sample into a new, closed file `name` in `dir`; returns its path.
std::string write_sample(const TempDir& dir, const std::string& name = "sample.db");

// PRAGMA user_version of the file (as last checkpointed): its schema version.
std::int64_t user_version(const std::string& path);

// A device row written as every schema version has it, into a file of an earlier version.
void insert_device(sqlite::Connection& db, const DeviceFingerprint& device);

// `name` in `dir`, migrated to schema version v only, holding `device` from version 1 on, in
// WAL mode from version 1 on: the file an older sgemm would have written.
std::string file_of_version(const TempDir& dir, int v, const DeviceFingerprint& device,
                            const std::string& name = "old.db");

// The bytes of a file, to check that a failed open changed nothing.
std::string bytes_of(const std::string& path);

// The names in `folder`, one a line, sorted: to check what a write left there.
std::string listing(const std::string& folder);

// A forked child process that runs `body` and exits: 0 when body returned, 1 when it
// threw (the message goes to stderr).
class ChildProcess {
public:
    explicit ChildProcess(const std::function<void()>& body);
    ~ChildProcess();  // kills and reaps a child still running
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    // Waits for the exit; returns its status, or 128 + the signal that killed it.
    int wait();
    // Whether it has not exited yet (and is not reaped: wait() still gives its status).
    bool running() const;
    void kill(int signal);

private:
    int pid_ = -1;
};

// ChildProcess(body).wait().
int in_child(const std::function<void()>& body);

}  // namespace sgemm::testing
