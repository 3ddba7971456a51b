// `sgemm-db stats`: what the file holds, per device, and how well the binary cache works.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"

namespace sgemm {

struct DeviceStats {
    std::string id;
    // None where rows name a device whose row was deleted by hand (verify names them): its
    // rows are counted all the same, as list shows them.
    std::optional<DeviceFingerprint> device;
    std::int64_t winners = 0, cublas_winners = 0;  // cublas_winners: shapes where cuBLAS stayed best
    std::int64_t measurements = 0, invalid_measurements = 0;
    std::int64_t missed_shapes = 0, misses = 0;  // distinct shapes, and calls
};

struct StoreStats {
    std::int64_t file_bytes = 0;  // the database's pages, without the WAL file
    std::int64_t kernels = 0;
    std::int64_t binaries = 0, binary_bytes = 0;
    // Each binary was compiled once (a cache miss) and served `binary_hits` lookups since,
    // so the hit rate is hits / (hits + binaries).
    std::int64_t binary_hits = 0;
    double hit_rate() const { return binaries + binary_hits ? double(binary_hits) / double(binaries + binary_hits) : 0; }
    std::vector<DeviceStats> devices;
};

StoreStats store_stats(TuningStore& store);

}  // namespace sgemm
