// A compile target (sm_XY) and the per-block limits a kernel configuration must respect
// on it. With a GPU the target is read off the device; without one it is named.
#pragma once
#include <string>
#include <vector>

namespace sgemm {

struct Arch {
    int sm = 0;  // 90 for sm_90

    std::string name() const { return "sm_" + std::to_string(sm); }
};

// Parses "sm_90", "90" or "9.0"; throws sgemm::Error naming the accepted forms, for one
// older than sm_70, or naming the architectures NVRTC compiles for when it is not one of them.
Arch parse_arch(const std::string& text);

// The architectures this process's NVRTC compiles for, ascending (nvrtcGetSupportedArchs):
// each toolkit drops old ones (CUDA 13 compiles for sm_75 and newer) and adds new ones.
const std::vector<int>& nvrtc_archs();

// "" when NVRTC compiles for `arch`; else why not, naming the architectures it does.
std::string unsupported_arch_reason(Arch arch);

struct ArchLimits {
    int sm = 0;  // the architecture they describe, as in Arch
    int max_threads_per_block = 1024;
    int max_registers_per_thread = 255;
    int registers_per_sm = 65536;
    int max_threads_per_sm = 2048;
    int static_shared_per_block = 48 * 1024;  // without opt-in
    int max_shared_per_block = 48 * 1024;     // with cudaFuncAttributeMaxDynamicSharedMemorySize
    int shared_per_sm = 64 * 1024;
};

// Published per-architecture limits (CUDA Programming Guide, compute capabilities table).
ArchLimits arch_limits(Arch arch);

}  // namespace sgemm
