#include "db/csv.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "src/util/error.h"
#include "src/util/text.h"

namespace sgemm {

std::string csv_line(const std::vector<std::string>& fields) {
    std::string out;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) out += ',';
        const std::string& f = fields[i];
        if (f.find_first_of(",\"\r\n") == std::string::npos) {
            out += f;
            continue;
        }
        out += '"';
        for (char c : f) out += c == '"' ? std::string("\"\"") : std::string(1, c);
        out += '"';
    }
    return out + "\n";
}

void strip_byte_order_mark(std::string& text) {
    static const std::string mark = "\xEF\xBB\xBF";
    if (text.compare(0, mark.size(), mark) == 0) text.erase(0, mark.size());
}

std::string read_csv_text(std::istream& in, const std::string& source, std::size_t max_bytes) {
    std::string text;
    char chunk[1 << 16];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
        if (text.size() + static_cast<std::size_t>(in.gcount()) > max_bytes)
            throw Error(printable(source) + ": larger than " + std::to_string(max_bytes) + " bytes, more than a CSV of this "
                                 "project holds");
        text.append(chunk, static_cast<std::size_t>(in.gcount()));
    }
    if (in.bad()) throw Error(printable(source) + ": cannot be read to its end");
    return text;
}

std::ifstream open_csv_file(const std::string& path) {
    std::error_code ec;
    const std::filesystem::file_status status = std::filesystem::status(path, ec);
    if (std::filesystem::is_directory(status)) throw Error(printable(path) + ": is a folder, not a CSV file");
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
        !std::filesystem::is_fifo(status))
        throw Error(printable(path) + ": is not a regular file or a pipe");
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(printable(path) + ": cannot open it" + (errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : ""));
    return in;
}

void check_standard_input_for_csv() {
    struct stat info;
    if (fstat(STDIN_FILENO, &info) != 0)
        throw Error(std::string("standard input: cannot be read (") + std::strerror(errno) + ")");
    if (S_ISDIR(info.st_mode)) throw Error("standard input: is a folder, not a CSV file");
}

std::vector<CsvRecord> read_csv(std::istream& in, const std::string& source) {
    return parse_csv(read_csv_text(in, source), source);
}

namespace {

// Whether text[i] ends a line: a newline, or a carriage return not before one (a lone CR ends
// a line, as between records, and a CRLF ends one line, at its LF).
bool ends_a_line(const std::string& text, std::size_t i) {
    return text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'));
}

}  // namespace

std::vector<CsvRecord> parse_csv(std::string text, const std::string& source, CsvComments comments) {
    std::vector<CsvRecord> records;
    strip_byte_order_mark(text);
    int line = 1;
    std::size_t i = 0;
    const auto fail = [&](int at, const std::string& what) {
        throw Error(printable(source) + ":" + std::to_string(at) + ": " + what);
    };
    // A tuning database handed over for a CSV (an import of what merge reads, a database as
    // --shapes) is named as such rather than as a binary file.
    if (text.rfind(std::string("SQLite format 3\0", 16), 0) == 0)
        throw CsvIsADatabaseError(printable(source) + ": is an SQLite database, not CSV text");
    // No text CSV holds a NUL byte (UTF-16 text and binary files do), and messages that quote
    // a field would end at it.
    if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
        int at = 1;
        for (std::size_t j = 0; j < nul; ++j) at += ends_a_line(text, j);
        fail(at, "holds a NUL byte, which no text CSV does: is it a binary file, or UTF-16 text? Save it as UTF-8");
    }
    while (i < text.size()) {
        if (comments == CsvComments::hash_lines) {
            const std::size_t first = text.find_first_not_of(" \t", i);
            if (first != std::string::npos && text[first] == '#') {  // to the end of its line
                i = text.find_first_of("\r\n", first);
                if (i == std::string::npos) break;
                i += text.compare(i, 2, "\r\n") == 0 ? 2 : 1;
                ++line;
                continue;
            }
        }
        CsvRecord record{line, {}};
        std::string field;
        bool end_of_record = false;
        while (!end_of_record) {
            if (i < text.size() && text[i] == '"') {  // a quoted field, line breaks allowed
                const int opened = line;
                ++i;
                while (true) {
                    if (i >= text.size()) fail(opened, "a quoted field is never closed");
                    if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                        field += '"';
                        i += 2;
                    } else if (text[i] == '"') {
                        ++i;
                        break;
                    } else {
                        if (ends_a_line(text, i)) ++line;
                        field += text[i++];
                    }
                }
                if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
                    fail(line, "text after the closing quote of a field");
            } else {
                while (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') field += text[i++];
            }
            record.fields.push_back(std::move(field));
            field.clear();
            if (i < text.size() && text[i] == ',') {
                ++i;
                continue;
            }
            if (i < text.size() && text[i] == '\r') ++i;
            if (i < text.size() && text[i] == '\n') ++i;
            ++line;
            end_of_record = true;
        }
        const bool blank = record.fields.size() == 1 &&
                           record.fields[0].find_first_not_of(" \t") == std::string::npos;
        if (!blank) records.push_back(std::move(record));
    }
    return records;
}

}  // namespace sgemm
