#include "db/base64.h"

#include <cstdint>

#include "src/util/error.h"
#include "src/util/text.h"

namespace sgemm {

namespace {
const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(const std::vector<char>& bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::size_t n = bytes.size() - i < 3 ? bytes.size() - i : 3;
        std::uint32_t group = 0;
        for (std::size_t j = 0; j < 3; ++j)
            group = group << 8 | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u);
        for (std::size_t j = 0; j < 4; ++j) out += j <= n ? kAlphabet[(group >> (18 - 6 * j)) & 63] : '=';
    }
    return out;
}

std::vector<char> base64_decode(const std::string& text) {
    if (text.size() % 4 != 0) throw Error("base64 text of " + std::to_string(text.size()) + " characters, not a multiple of 4");
    std::vector<char> out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t i = 0; i < text.size(); i += 4) {
        // Only the last group may end in one or two '='.
        const bool last = i + 4 == text.size();
        const int padding = last && text[i + 3] == '=' ? (text[i + 2] == '=' ? 2 : 1) : 0;
        std::uint32_t group = 0;
        for (std::size_t j = 0; j < 4; ++j) {
            group <<= 6;
            if (static_cast<int>(j) >= 4 - padding) continue;
            const char c = text[i + j];
            const char* at = std::char_traits<char>::find(kAlphabet, 64, c);
            if (!at) throw Error("not base64: " + single_quoted(std::string(1, c)) + " at character " + std::to_string(i + j + 1));
            group |= static_cast<std::uint32_t>(at - kAlphabet);
        }
        for (int j = 0; j < 3 - padding; ++j) out.push_back(static_cast<char>((group >> (16 - 8 * j)) & 0xff));
    }
    return out;
}

}  // namespace sgemm
