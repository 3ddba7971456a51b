// Text from a file, made safe to print: a name or value read from a config can hold control
// characters (a newline, an escape sequence) that would break a CSV comment or a terminal.
#pragma once
#include <cstdio>
#include <string>

namespace sgemm {

// `text` with each control character written as \xNN.
inline std::string printable(const std::string& text) {
    std::string out;
    for (const unsigned char c : text) {
        if (c >= 0x20 && c != 0x7F) {
            out += static_cast<char>(c);
            continue;
        }
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\x%02x", c);
        out += escape;
    }
    return out;
}

}  // namespace sgemm
