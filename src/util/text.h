// Text the tools read from files and command lines: names matched in any case, and text made
// safe to print (a config, a shapes CSV or an imported database row can hold control
// characters, a newline or an escape sequence, that would break a table, a CSV comment or a
// terminal).
#pragma once
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

namespace sgemm {

// "1 float", "3 floats": a count and its noun, singular for one.
inline std::string count_of(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

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

// printable, line by line: a message of several lines keeps its line breaks.
inline std::string printable_lines(const std::string& text) {
    std::string out;
    for (std::size_t start = 0;;) {
        const std::size_t end = text.find('\n', start);
        out += printable(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) return out;
        out += '\n';
        start = end + 1;
    }
}

// Whether `text` holds a control character (one printable() would escape).
inline bool has_control_character(const std::string& text) { return printable(text) != text; }

// The parts of `text` between `separator`s, empty ones included: "q//v" is q, "", v.
inline std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts(1);
    for (const char c : text) {
        if (c == separator)
            parts.emplace_back();
        else
            parts.back() += c;
    }
    return parts;
}

// `text` in lower case (ASCII), for names given in any case ("FP16", "Llama-3-8B", ".JSON").
inline std::string lower_case(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

}  // namespace sgemm
