#include "db/csv.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <utility>

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

namespace {
const std::string kByteOrderMark = "\xEF\xBB\xBF";  // UTF-8's
}  // namespace

void strip_byte_order_mark(std::string& text) {
    if (text.compare(0, kByteOrderMark.size(), kByteOrderMark) == 0) text.erase(0, kByteOrderMark.size());
}

// A mark after a line break inside a quoted field goes too: no field this project writes holds
// one (the shapes reader refuses such line breaks in every column).
std::string without_joined_files_byte_order_marks(std::string text) {
    for (std::size_t at = text.find(kByteOrderMark, 1); at != std::string::npos; at = text.find(kByteOrderMark, at)) {
        if (text[at - 1] == '\n' || text[at - 1] == '\r')
            text.erase(at, kByteOrderMark.size());
        else
            at += kByteOrderMark.size();
    }
    return text;
}

std::string read_csv_text(std::istream& in, const std::string& source, std::size_t max_bytes) {
    std::string text;
    char chunk[1 << 16];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
        if (text.size() + static_cast<std::size_t>(in.gcount()) > max_bytes)
            throw CsvTooLargeError(printable(source) + ": larger than " + std::to_string(max_bytes) +
                                   " bytes, more than a CSV of this project holds");
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

CsvRecordReader::CsvRecordReader(std::string text, std::string source, CsvComments comments, std::size_t max_fields)
    : text_(std::move(text)), source_(std::move(source)), comments_(comments), max_fields_(max_fields) {
    strip_byte_order_mark(text_);
    // A tuning database handed over for a CSV (an import of what merge reads, a database as
    // --shapes) is named as such rather than as a binary file.
    if (text_.rfind(std::string("SQLite format 3\0", 16), 0) == 0)
        throw CsvIsADatabaseError(printable(source_) + ": is an SQLite database, not CSV text");
    // No text CSV holds a NUL byte (UTF-16 text and binary files do), and messages that quote
    // a field would end at it.
    if (const std::size_t nul = text_.find('\0'); nul != std::string::npos) {
        int at = 1;
        for (std::size_t j = 0; j < nul; ++j) at += ends_a_line(text_, j);
        throw Error(printable(source_) + ":" + std::to_string(at) +
                    ": holds a NUL byte, which no text CSV does: is it a binary file, or UTF-16 text? Save it as UTF-8");
    }
}

// Whether the record that starts here is a comment; if so, skips its line, to past the line
// break that ends it (or to the text's end), counting it.
bool CsvRecordReader::at_comment() {
    if (comments_ != CsvComments::hash_lines) return false;
    const std::size_t first = text_.find_first_not_of(" \t", at_);
    if (first == std::string::npos || text_[first] != '#') return false;
    const std::size_t end = text_.find_first_of("\r\n", first);
    if (end == std::string::npos) {
        at_ = text_.size();
    } else {
        at_ = end + (text_.compare(end, 2, "\r\n") == 0 ? 2 : 1);
        ++line_;
    }
    return true;
}

bool CsvRecordReader::next(CsvRecord& record) {
    while (at_ < text_.size()) {
        if (at_comment()) continue;
        record = CsvRecord{line_, {}, {}, {}};
        // The record's first fault: the rest of it is still read, so that the next record
        // starts where it really does (a quoted field after the fault may hold line breaks).
        const auto broken = [&](int at, const std::string& what) {
            if (record.error.empty()) record.error = printable(source_) + ":" + std::to_string(at) + ": " + what;
        };
        std::size_t fields = 0;
        std::string field;
        while (true) {
            const bool quoted = at_ < text_.size() && text_[at_] == '"';
            if (quoted) {  // line breaks allowed
                const int opened = line_;
                ++at_;
                while (true) {
                    if (at_ >= text_.size()) {
                        broken(opened, "a quoted field is never closed");
                        return true;
                    }
                    if (text_[at_] == '"' && at_ + 1 < text_.size() && text_[at_ + 1] == '"') {
                        field += '"';
                        at_ += 2;
                    } else if (text_[at_] == '"') {
                        ++at_;
                        break;
                    } else {
                        if (ends_a_line(text_, at_)) ++line_;
                        field += text_[at_++];
                    }
                }
                if (at_ < text_.size() && text_[at_] != ',' && text_[at_] != '\n' && text_[at_] != '\r') {
                    broken(line_, "text after the closing quote of a field");
                    at_ = std::min(text_.find_first_of(",\r\n", at_), text_.size());  // that text is no field
                }
            } else {
                const std::size_t end = std::min(text_.find_first_of(",\r\n", at_), text_.size());
                field.append(text_, at_, end - at_);
                at_ = end;
            }
            if (++fields <= max_fields_) {
                record.fields.push_back(std::move(field));
                record.quoted.push_back(quoted);
            }
            field.clear();
            if (at_ < text_.size() && text_[at_] == ',') {
                ++at_;
                continue;
            }
            if (at_ < text_.size() && text_[at_] == '\r') ++at_;
            if (at_ < text_.size() && text_[at_] == '\n') ++at_;
            ++line_;
            break;
        }
        if (fields > max_fields_)
            broken(record.line, std::to_string(fields) + " fields, more than the " + std::to_string(max_fields_) +
                                    " a line of this file may hold");
        if (!record.error.empty()) return true;
        const bool blank = record.fields.size() == 1 && record.fields[0].find_first_not_of(" \t") == std::string::npos;
        if (!blank) return true;
    }
    return false;
}

std::vector<CsvRecord> parse_csv(std::string text, const std::string& source, CsvComments comments) {
    CsvRecordReader reader(std::move(text), source, comments, std::numeric_limits<std::size_t>::max());
    std::vector<CsvRecord> records;
    for (CsvRecord record; reader.next(record);) {
        if (!record.error.empty()) throw Error(record.error);
        records.push_back(std::move(record));
    }
    return records;
}

}  // namespace sgemm
