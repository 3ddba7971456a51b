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

#include "src/util/utf8.h"

namespace sgemm {

// "1 float", "3 floats": a count and its noun, singular for one.
inline std::string count_of(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Whether byte `c` is an ASCII control character (a newline, an escape, DEL).
inline bool is_control_byte(unsigned char c) { return c < 0x20 || c == 0x7F; }

// The code point of the well-formed UTF-8 sequence of `length` bytes at text[i].
inline char32_t code_point_at(const std::string& text, std::size_t i, std::size_t length) {
    const unsigned char first = static_cast<unsigned char>(text[i]);
    char32_t cp = length == 1 ? first : first & (0x7F >> length);
    for (std::size_t j = 1; j < length; ++j) cp = cp << 6 | (static_cast<unsigned char>(text[i + j]) & 0x3F);
    return cp;
}

// Whether code point `cp` is a control character that is not ASCII: C1 (U+0080 to U+009F;
// U+009B is the one-character form of the escape that starts a terminal's colour and cursor
// codes, and terminals such as xterm act on it), the line and paragraph separators (U+2028,
// U+2029: a line break to editors and to Python), or an invisible format character that
// reorders or hides text: the bidirectional marks, embeddings, overrides and isolates (U+202E
// shows the rest of a line backwards), the zero-width space, the soft hyphen, the invisible
// operators and deprecated format controls, the interlinear annotation marks, the tag
// characters, and the byte order mark (U+FEFF before a column's name makes "unknown column
// 'M'" of a column that reads M). The zero-width joiner and non-joiner (U+200C, U+200D) are
// not among them: Persian and Indic names and emoji sequences need them. tools/script_io.py's
// is_hidden_control is the same set.
inline bool is_unicode_control(char32_t cp) {
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0xAD || cp == 0x061C || cp == 0x180E || cp == 0x200B ||
           cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F) ||
           cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) || (cp >= 0xE0000 && cp <= 0xE007F);
}

// The length in bytes of the control character that starts at text[i]: an ASCII one
// (is_control_byte) or a well-formed UTF-8 one (is_unicode_control); 0 where none starts.
inline std::size_t control_character_length(const std::string& text, std::size_t i) {
    if (is_control_byte(static_cast<unsigned char>(text[i]))) return 1;
    const std::size_t length = utf8_sequence_length(text, i);
    return length > 1 && is_unicode_control(code_point_at(text, i, length)) ? length : 0;
}

// `text` with each control character (control_character_length: C0, DEL, C1 and the
// invisible format characters), and each byte that is not part of well-formed UTF-8 (a name in
// another encoding, which a terminal would show as garbage or take as a control sequence),
// written as \xNN, a byte each.
inline std::string printable(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t control = control_character_length(text, i);
        const std::size_t length = utf8_sequence_length(text, i);
        if (control == 0 && length > 0) {
            out.append(text, i, length);
            i += length;
            continue;
        }
        // A control character, byte by byte, or one byte that is not UTF-8.
        for (const std::size_t end = i + (control > 0 ? control : 1); i < end; ++i) {
            char escape[8];
            std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned char>(text[i]));
            out += escape;
        }
    }
    return out;
}

// `value`, a thing typed or read from a file, as a message quotes it: in single quotes and
// printable, so a newline in it shows as \x0a and cannot start a line of its own in a message
// that the tools print line by line (printable_lines). A value past kQuotedBytes (a CSV field
// of megabytes) is cut there, whole UTF-8 characters kept, and its length given: twenty bad
// rows of such fields made sixty megabytes of messages.
constexpr std::size_t kQuotedBytes = 200;
inline std::string single_quoted(const std::string& value) {
    if (value.size() <= kQuotedBytes) return "'" + printable(value) + "'";
    return "'" + printable(utf8_prefix(value, kQuotedBytes)) + "...' (" + std::to_string(value.size()) + " bytes)";
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

// Whether `text` holds a control character (C0, DEL, C1 or an invisible format character).
inline bool has_control_character(const std::string& text) {
    for (std::size_t i = 0; i < text.size(); ++i)
        if (control_character_length(text, i) > 0) return true;
    return false;
}

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

// `text` without the white space at its ends: a field or list item as the user meant it.
inline std::string trim(const std::string& text) {
    std::size_t begin = 0, end = text.size();
    while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
    while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
    return text.substr(begin, end - begin);
}

// `text`'s lines, each trimmed, joined by " | " with the empty ones left out: a compiler's
// log of several lines as one reason, which fits a row of a table or a line of a listing
// (where printable would show each line break as \x0a).
inline std::string on_one_line(const std::string& text) {
    std::string out;
    for (const std::string& line : split(text, '\n')) {
        const std::string trimmed = trim(line);
        if (!trimmed.empty()) out += (out.empty() ? "" : " | ") + trimmed;
    }
    return out;
}

// `text` with `prefix` before each of its lines: a log of several lines set under the line
// that names what it is about.
inline std::string indented(const std::string& text, const std::string& prefix) {
    std::string out;
    for (const std::string& line : split(text, '\n')) out += (out.empty() ? "" : "\n") + prefix + line;
    return out;
}

// At most the first `max_bytes` of `text` (whole UTF-8 characters) and, where it is cut,
// "..." and its whole length: a compiler's log cut mid-word read as if it were all there.
inline std::string cut_with_length(const std::string& text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) return text;
    return utf8_prefix(text, max_bytes) + "... (" + std::to_string(text.size()) + " bytes)";
}

// The base name of `path`, as __FILE__ gives it ("../src/families/x.cpp" is "x.cpp").
inline std::string base_name(const std::string& path) { return path.substr(path.find_last_of("/\\") + 1); }

// `text` in lower case (ASCII), for names given in any case ("FP16", "Llama-3-8B", ".JSON").
inline std::string lower_case(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

// A word chosen from a list (a name, a dtype, a strategy), as the user meant it: in lower case
// ("FP16" is fp16) and without the white space around it (" nt", as a list item reads).
inline std::string chosen_word(const std::string& text) { return lower_case(trim(text)); }

}  // namespace sgemm
