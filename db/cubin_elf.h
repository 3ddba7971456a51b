// Reading a cubin's target architecture from its ELF header on the CPU, so that `sgemm-db
// verify`, import and merge can check every binary without a GPU.
#pragma once
#include <vector>

namespace sgemm {

// The SM a cubin was compiled for (90 for sm_90). Throws Error saying what is wrong when
// the bytes are not a 64-bit little-endian CUDA ELF, or not a whole one: a header table or
// a section that reaches past the end of the bytes (a file cut short in a transfer).
int cubin_sm(const std::vector<char>& cubin);

}  // namespace sgemm
