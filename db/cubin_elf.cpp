#include "db/cubin_elf.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "src/util/error.h"

namespace sgemm {

namespace {

// ELF64 header fields (System V ABI) and the CUDA values in them.
constexpr std::size_t kHeaderSize = 64;
constexpr std::size_t kClass = 4, kData = 5, kAbiVersion = 8, kMachine = 18, kFlags = 48;
constexpr std::size_t kProgramHeadersAt = 32, kSectionHeadersAt = 40;                  // e_phoff, e_shoff
constexpr std::size_t kProgramHeaderSize = 54, kProgramHeaderCount = 56;               // e_phentsize, e_phnum
constexpr std::size_t kSectionHeaderSize = 58, kSectionHeaderCount = 60;               // e_shentsize, e_shnum
constexpr int kClass64 = 2, kLittleEndian = 1, kMachineCuda = 190;
// Where a section header (sh_type, sh_offset, sh_size) and a program header (p_offset,
// p_filesz) keep the bytes they describe; a NOBITS section (.bss, .nv.shared) has none.
constexpr std::size_t kSectionType = 4, kSectionOffset = 24, kSectionSize = 32;
// A symbol table section names its string table in sh_link; each symbol (Elf64_Sym) holds
// st_name (an offset into that table), st_info (its type in the low four bits) and st_shndx
// (0 for a symbol the file only refers to).
constexpr std::size_t kSectionLink = 40, kSectionEntrySize = 56;
constexpr std::uint64_t kSectionHeaderBytes = 64, kProgramHeaderBytes = 56;  // Elf64_Shdr, Elf64_Phdr
constexpr std::uint64_t kSectionSymbolTable = 2;
constexpr std::size_t kSymbolInfo = 4, kSymbolOther = 5, kSymbolSection = 6, kSymbolSize = 24;
constexpr unsigned kSymbolTypeFunction = 2;
constexpr unsigned kCudaEntry = 0x10;  // STO_CUDA_ENTRY in st_other: a kernel, not a device function
constexpr std::size_t kSegmentOffset = 8, kSegmentFileSize = 32;
constexpr std::uint64_t kSectionNoBits = 8;
// The SM number is in e_flags: bits 8-15 from ELF ABI version 8 on (nvcc 13 writes sm_90 as
// 0x06005a04), bits 0-7 in the older ABI version 7.
constexpr int kAbiVersionSmInSecondByte = 8;

std::uint64_t little_endian(const std::vector<char>& bytes, std::size_t at, int size) {
    std::uint64_t value = 0;
    for (int i = size - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
    return value;
}

// Whether [offset, offset + size) lies within the file; written so that no sum can overflow.
bool inside(std::uint64_t offset, std::uint64_t size, std::size_t file_size) {
    return offset <= file_size && size <= file_size - offset;
}

// Throws unless every header table, section and segment the header names lies inside the
// bytes. A cubin cut short keeps a valid header but loses its section headers, which the
// linker writes last.
void require_whole(const std::vector<char>& cubin) {
    const std::size_t size = cubin.size();
    auto cut_short = [&](const std::string& what) {
        return Error("cut short: " + what + " reaches past its " + std::to_string(size) + " bytes");
    };
    struct Table {
        const char* table;  // the header table's name
        const char* part;   // what each of its entries describes
        std::uint64_t at, entry, count;
        std::uint64_t smallest_entry;  // sizeof Elf64_Shdr or Elf64_Phdr: every field is read within it
        std::size_t offset_field, size_field;
        bool sections;  // entries have a type, and NOBITS sections keep no bytes
    };
    const Table tables[] = {
        {"section header table", "section", little_endian(cubin, kSectionHeadersAt, 8),
         little_endian(cubin, kSectionHeaderSize, 2), little_endian(cubin, kSectionHeaderCount, 2),
         kSectionHeaderBytes, kSectionOffset, kSectionSize, true},
        {"program header table", "segment", little_endian(cubin, kProgramHeadersAt, 8),
         little_endian(cubin, kProgramHeaderSize, 2), little_endian(cubin, kProgramHeaderCount, 2),
         kProgramHeaderBytes, kSegmentOffset, kSegmentFileSize, false},
    };
    for (const Table& t : tables) {
        if (t.count == 0) continue;
        if (t.entry < t.smallest_entry) throw Error(std::string("its ") + t.table + "'s entries are " +
                                                    std::to_string(t.entry) + " bytes, under an ELF64 header's " +
                                                    std::to_string(t.smallest_entry));
        if (!inside(t.at, t.entry * t.count, size)) throw cut_short(std::string("its ") + t.table);
        for (std::uint64_t i = 0; i < t.count; ++i) {
            const std::size_t header = t.at + i * t.entry;
            if (t.sections && little_endian(cubin, header + kSectionType, 4) == kSectionNoBits) continue;
            if (!inside(little_endian(cubin, header + t.offset_field, 8), little_endian(cubin, header + t.size_field, 8), size))
                throw cut_short(std::string(t.part) + " " + std::to_string(i));
        }
    }
}

}  // namespace

bool cubin_defines_kernel(const std::vector<char>& cubin, const std::string& name) {
    // A NUL inside the name would match two names of the string table side by side.
    if (name.find('\0') != std::string::npos) return false;
    const std::uint64_t headers = little_endian(cubin, kSectionHeadersAt, 8),
                        entry = little_endian(cubin, kSectionHeaderSize, 2),
                        count = little_endian(cubin, kSectionHeaderCount, 2);
    // What cubin_sm took: whole section headers inside the bytes (read again here, cheaply,
    // so that no caller's slip reads past them).
    if (count > 0 && (entry < kSectionHeaderBytes || !inside(headers, entry * count, cubin.size()))) return false;
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::size_t header = headers + i * entry;
        if (little_endian(cubin, header + kSectionType, 4) != kSectionSymbolTable) continue;
        const std::uint64_t link = little_endian(cubin, header + kSectionLink, 4);
        const std::uint64_t symbol_size = little_endian(cubin, header + kSectionEntrySize, 8);
        if (link >= count || symbol_size < kSymbolSize) continue;
        const std::size_t strings = headers + link * entry;
        const std::uint64_t strings_at = little_endian(cubin, strings + kSectionOffset, 8),
                            strings_size = little_endian(cubin, strings + kSectionSize, 8);
        const std::uint64_t symbols_at = little_endian(cubin, header + kSectionOffset, 8),
                            symbols_size = little_endian(cubin, header + kSectionSize, 8);
        // cubin_sm checked the sections' bytes, but not that a symbol table links to one with any.
        if (!inside(strings_at, strings_size, cubin.size()) || !inside(symbols_at, symbols_size, cubin.size())) continue;
        const std::uint64_t symbols = symbols_size / symbol_size;
        for (std::uint64_t s = 0; s < symbols; ++s) {
            const std::size_t symbol = symbols_at + s * symbol_size;
            const std::uint64_t name_at = little_endian(cubin, symbol, 4);
            if ((static_cast<unsigned char>(cubin[symbol + kSymbolInfo]) & 0xf) != kSymbolTypeFunction ||
                !(static_cast<unsigned char>(cubin[symbol + kSymbolOther]) & kCudaEntry) ||
                little_endian(cubin, symbol + kSymbolSection, 2) == 0 || name_at >= strings_size)
                continue;
            // The name and its terminating NUL, within the string table.
            if (name.size() < strings_size - name_at &&
                std::equal(name.begin(), name.end(), cubin.begin() + strings_at + name_at) &&
                cubin[strings_at + name_at + name.size()] == '\0')
                return true;
        }
    }
    return false;
}

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
    require_whole(cubin);
    return sm;
}

}  // namespace sgemm
