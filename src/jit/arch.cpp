#include "src/jit/arch.h"

#include <nvrtc.h>

#include <algorithm>
#include <cctype>

#include "src/cuda/check.h"
#include "src/jit/compiler.h"
#include "src/util/error.h"

namespace sgemm {

Arch parse_arch(const std::string& text) {
    std::string digits;
    for (char c : text.rfind("sm_", 0) == 0 ? text.substr(3) : text)
        if (c != '.') digits += c;
    bool ok = digits.size() >= 2 && digits.size() <= 3;
    for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    if (!ok)
        throw Error("invalid architecture '" + text + "': expected sm_XY, XY or X.Y, e.g. sm_90");
    const Arch arch{std::stoi(digits)};
    // The limits (arch_limits) and the families' constraints start at Volta.
    if (arch.sm < 70) throw Error("architecture " + text + " is not supported: the oldest target is sm_70");
    if (const std::string why = unsupported_arch_reason(arch); !why.empty()) throw Error(why);
    return arch;
}

const std::vector<int>& nvrtc_archs() {
    static const std::vector<int> archs = [] {
        int count = 0;
        SGEMM_NVRTC_CHECK(nvrtcGetNumSupportedArchs(&count));
        std::vector<int> out(static_cast<std::size_t>(count));
        SGEMM_NVRTC_CHECK(nvrtcGetSupportedArchs(out.data()));
        std::sort(out.begin(), out.end());
        return out;
    }();
    return archs;
}

std::string unsupported_arch_reason(Arch arch) {
    const std::vector<int>& archs = nvrtc_archs();
    if (std::find(archs.begin(), archs.end(), arch.sm) != archs.end()) return "";
    std::string list;
    for (int sm : archs) list += (list.empty() ? "" : ", ") + Arch{sm}.name();
    return "NVRTC " + nvrtc_version() + " does not compile for " + arch.name() + "; it compiles for " + list;
}

ArchLimits arch_limits(Arch arch) {
    ArchLimits l;
    l.sm = arch.sm;
    switch (arch.sm) {
        case 70: case 72: l.max_shared_per_block = 96 * 1024; l.shared_per_sm = 96 * 1024; break;
        case 75: l.max_shared_per_block = 64 * 1024; l.shared_per_sm = 64 * 1024; l.max_threads_per_sm = 1024; break;
        case 80: case 87: l.max_shared_per_block = 163 * 1024; l.shared_per_sm = 164 * 1024; break;
        case 86: case 89: l.max_shared_per_block = 99 * 1024; l.shared_per_sm = 100 * 1024; l.max_threads_per_sm = 1536; break;
        case 90: case 100: case 103: l.max_shared_per_block = 227 * 1024; l.shared_per_sm = 228 * 1024; break;
        default: l.max_shared_per_block = 99 * 1024; l.shared_per_sm = 100 * 1024; l.max_threads_per_sm = 1536; break;
    }
    return l;
}

}  // namespace sgemm
