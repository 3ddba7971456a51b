// A 64-bit FNV-1a hash, printed as 16 hex digits: the key of the binary cache and a family's
// sources hash. Not cryptographic; it only has to tell our own sources apart.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace sgemm {

class Fnv1a64 {
public:
    Fnv1a64& add(const std::string& text) {
        for (unsigned char c : text) {
            state_ ^= c;
            state_ *= 0x100000001b3ULL;
        }
        state_ ^= 0xff;  // field separator, so ("ab","c") and ("a","bc") differ
        state_ *= 0x100000001b3ULL;
        return *this;
    }
    std::string hex() const {
        char buf[17];
        std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(state_));
        return buf;
    }

private:
    std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

}  // namespace sgemm
