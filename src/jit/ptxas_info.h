// The resource figures ptxas prints with --ptxas-options=-v, parsed from the NVRTC log.
// The tuner rejects configurations that spill and computes occupancy from these.
#pragma once
#include <string>

namespace sgemm {

struct PtxasInfo {
    bool found = false;  // false when the log held no ptxas report
    int registers = 0;
    int shared_bytes = 0;  // static shared memory
    int stack_bytes = 0;
    int spill_store_bytes = 0;
    int spill_load_bytes = 0;

    bool spills() const { return spill_store_bytes > 0 || spill_load_bytes > 0; }
};

PtxasInfo parse_ptxas_info(const std::string& log);

}  // namespace sgemm
