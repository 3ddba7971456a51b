#include "src/jit/ptxas_info.h"

#include <algorithm>
#include <regex>

namespace sgemm {
namespace {
// The largest value of the first group of `re` in `log`, 0 where it never matches.
int max_match(const std::string& log, const std::regex& re) {
    int largest = 0;
    for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it)
        largest = std::max(largest, std::stoi((*it)[1].str()));
    return largest;
}
}  // namespace

// The report looks like this, once per kernel of the program (two where a configuration
// carries a second kernel, a stream-K tail or a sum pass: the figures are then the larger of
// the two):
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
    info.found = std::regex_search(log, used);
    if (!info.found) return info;
    info.registers = max_match(log, used);
    info.shared_bytes = max_match(log, smem);
    info.stack_bytes = max_match(log, stack);
    info.spill_store_bytes = max_match(log, spill_st);
    info.spill_load_bytes = max_match(log, spill_ld);
    return info;
}

}  // namespace sgemm
