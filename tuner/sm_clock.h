// The SM clock of a GPU right now, where it can be read: through NVML, loaded at run time
// (libnvidia-ml.so.1 comes with the driver), so nothing links against it and a machine
// without a driver simply has no reading.
#pragma once
#include <optional>

namespace sgemm {

// MHz of the SM clock of device `ordinal` (NVML's numbering, which matches CUDA's on a
// machine without CUDA_VISIBLE_DEVICES games), or nullopt when NVML is not there.
std::optional<int> read_sm_clock_mhz(int ordinal);

}  // namespace sgemm
