// Reading a cubin's target architecture from its ELF header on the CPU, so `sgemm-db
// verify` can check every cached binary without a GPU.
#pragma once
#include <vector>

namespace sgemm {

// The SM a cubin was compiled for (90 for sm_90). Throws Error saying what is wrong when
// the bytes are not a 64-bit little-endian CUDA ELF.
int cubin_sm(const std::vector<char>& cubin);

}  // namespace sgemm
