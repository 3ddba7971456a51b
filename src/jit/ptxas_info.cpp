#include "src/jit/ptxas_info.h"

#include <regex>

namespace sgemm {
namespace {
int match_int(const std::string& log, const std::regex& re) {
    std::smatch m;
    return std::regex_search(log, m, re) ? std::stoi(m[1].str()) : 0;
}
}  // namespace

// The report looks like this (one kernel per program in this project):
//   ptxas info    : Function properties for _Z11sgemm_naiveILi32ELi8EEv9SgemmArgs
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 32 registers, used 0 barriers, 8192 bytes smem, 400 bytes cmem[0]
PtxasInfo parse_ptxas_info(const std::string& log) {
    static const std::regex used(R"(Used (\d+) registers)");
    static const std::regex smem(R"((\d+) bytes smem)");
    static const std::regex stack(R"((\d+) bytes stack frame)");
    static const std::regex spill_st(R"((\d+) bytes spill stores)");
    static const std::regex spill_ld(R"((\d+) bytes spill loads)");
    PtxasInfo info;
    std::smatch m;
    info.found = std::regex_search(log, m, used);
    if (!info.found) return info;
    info.registers = std::stoi(m[1].str());
    info.shared_bytes = match_int(log, smem);
    info.stack_bytes = match_int(log, stack);
    info.spill_store_bytes = match_int(log, spill_st);
    info.spill_load_bytes = match_int(log, spill_ld);
    return info;
}

}  // namespace sgemm
