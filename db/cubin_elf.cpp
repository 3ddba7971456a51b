#include "db/cubin_elf.h"

#include <cstdint>
#include <string>

#include "src/util/error.h"

namespace sgemm {

namespace {

// ELF64 header fields (System V ABI) and the CUDA values in them.
constexpr std::size_t kHeaderSize = 64;
constexpr std::size_t kClass = 4, kData = 5, kAbiVersion = 8, kMachine = 18, kFlags = 48;
constexpr int kClass64 = 2, kLittleEndian = 1, kMachineCuda = 190;
// The SM number is in e_flags: bits 8-15 from ELF ABI version 8 on (nvcc 13 writes sm_90 as
// 0x06005a04), bits 0-7 in the older ABI version 7.
constexpr int kAbiVersionSmInSecondByte = 8;

std::uint32_t little_endian(const std::vector<char>& bytes, std::size_t at, int size) {
    std::uint32_t value = 0;
    for (int i = size - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
    return value;
}

}  // namespace

int cubin_sm(const std::vector<char>& cubin) {
    if (cubin.size() < kHeaderSize || std::string(cubin.data(), 4) != "\x7f" "ELF")
        throw Error("not an ELF file (" + std::to_string(cubin.size()) + " bytes, no ELF magic)");
    if (cubin[kClass] != kClass64 || cubin[kData] != kLittleEndian) throw Error("not a 64-bit little-endian ELF");
    const std::uint32_t machine = little_endian(cubin, kMachine, 2);
    if (machine != kMachineCuda)
        throw Error("an ELF for machine " + std::to_string(machine) + ", not CUDA (" + std::to_string(kMachineCuda) + ")");
    const std::uint32_t flags = little_endian(cubin, kFlags, 4);
    const int sm = static_cast<int>(cubin[kAbiVersion] >= kAbiVersionSmInSecondByte ? (flags >> 8) & 0xff : flags & 0xff);
    if (sm == 0) throw Error("a CUDA ELF that names no SM in its header");
    return sm;
}

}  // namespace sgemm
