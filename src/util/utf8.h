// UTF-8 well-formedness, for the JSON reader (text must be UTF-8) and writer (output must be).
#pragma once
#include <cstddef>
#include <string>

namespace sgemm {

// The length of the well-formed UTF-8 sequence that starts at text[i] (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF): 1 for ASCII, 2 to 4 otherwise, 0 if the bytes
// there are not UTF-8.
inline std::size_t utf8_sequence_length(const std::string& text, std::size_t i) {
    const auto byte = [&](std::size_t j) { return i + j < text.size() ? static_cast<unsigned char>(text[i + j]) : 0u; };
    const unsigned first = byte(0);
    if (first < 0x80) return 1;
    std::size_t length;
    unsigned low = 0x80, high = 0xBF;  // the range of the second byte
    if (first >= 0xC2 && first <= 0xDF) {
        length = 2;
    } else if (first >= 0xE0 && first <= 0xEF) {
        length = 3;
        if (first == 0xE0) low = 0xA0;   // shorter forms exist
        if (first == 0xED) high = 0x9F;  // surrogates
    } else if (first >= 0xF0 && first <= 0xF4) {
        length = 4;
        if (first == 0xF0) low = 0x90;   // shorter forms exist
        if (first == 0xF4) high = 0x8F;  // past U+10FFFF
    } else {
        return 0;
    }
    if (byte(1) < low || byte(1) > high) return 0;
    for (std::size_t j = 2; j < length; ++j)
        if (byte(j) < 0x80 || byte(j) > 0xBF) return 0;
    return length;
}

// At most the first `max_bytes` bytes of `text`, cut before a UTF-8 character that would not fit
// whole rather than through it (a cut sequence is no UTF-8, and a database's text must be).
inline std::string utf8_prefix(const std::string& text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) return text;
    std::size_t end = max_bytes;
    // Back over the continuation bytes (10xxxxxx) of the character at the cut: three at most.
    for (int i = 0; i < 3 && end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80; ++i) --end;
    return text.substr(0, end);
}

// `text` with each byte that is not part of a well-formed sequence (a file name in another
// encoding) replaced by U+FFFD, so that it is UTF-8 wherever it goes (JSON, a database's text).
inline std::string as_utf8(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = utf8_sequence_length(text, i);
        if (length == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(text, i, length);
            i += length;
        }
    }
    return out;
}

}  // namespace sgemm
