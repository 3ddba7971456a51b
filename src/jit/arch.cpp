#include "src/jit/arch.h"

#include <cctype>

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
    const int sm = std::stoi(digits);
    if (sm < 70) throw Error("architecture " + text + " is not supported: the oldest target is sm_70");
    return Arch{sm};
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
