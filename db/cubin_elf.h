// Reading a cubin's target architecture and its kernels' names from its ELF on the CPU, so
// that `sgemm-db verify`, import and merge can check every binary without a GPU.
#pragma once
#include <string>
#include <vector>

namespace sgemm {

// The SM a cubin was compiled for (90 for sm_90). Throws Error saying what is wrong when
// the bytes are not a 64-bit little-endian CUDA ELF, or not a whole one: a header table or
// a section that reaches past the end of the bytes (a file cut short in a transfer).
int cubin_sm(const std::vector<char>& cubin);

// Whether the cubin's symbol table defines a kernel (a function marked as an entry point, not a
// device function) named `name`: the name a load looks the kernel up by, so a binary row whose
// name is not there fails every handle that loads it.
// Takes bytes cubin_sm accepted (whole sections); a symbol table or name that reaches past its
// section counts as no such kernel.
bool cubin_defines_kernel(const std::vector<char>& cubin, const std::string& name);

}  // namespace sgemm
