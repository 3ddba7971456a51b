// The SM clock of a GPU right now, where it can be read: through NVML, loaded at run time
// (libnvidia-ml.so.1 comes with the driver), so nothing links against it and a machine
// without a driver simply has no reading.
#pragma once
#include <optional>

namespace sgemm {

// MHz of the SM clock of CUDA device `ordinal`, or nullopt when NVML is not there. NVML
// numbers every GPU of the host in PCI order, while CUDA numbers the visible ones
// (CUDA_VISIBLE_DEVICES) fastest first, so the GPU is found by its PCI bus id, not its index.
std::optional<int> read_sm_clock_mhz(int ordinal);

}  // namespace sgemm
