// CSV as RFC 4180 has it: comma-separated fields, quoted when they hold a comma, a quote or
// a line break, quotes doubled inside quotes. Records keep the line they start on, so an
// error can name it.
#pragma once
#include <cstddef>
#include <fstream>
#include <istream>
#include <string>
#include <vector>

#include "src/util/error.h"

namespace sgemm {

// Bad lines named in an error: a file that is wholly wrong (another table) would otherwise
// print a line for each of its rows.
constexpr std::size_t kBadLinesShown = 20;

// Far more fields than a line of this project's CSV files has (a shapes file has at most 9
// columns, an export 38), padding and all (a spreadsheet pads each line to its widest):
// the reader refuses a longer line, and keeps no field past it.
constexpr std::size_t kMaxCsvFields = 1024;

// One record, with a line break.
std::string csv_line(const std::vector<std::string>& fields);

struct CsvRecord {
    int line = 0;  // 1-based line the record starts on
    std::vector<std::string> fields;
    std::vector<bool> quoted;  // whether each field was quoted: its quotes are not in its text
    std::string error;  // why the text breaks this record ("<source>:<line>: ..."), else empty
};

// Removes a UTF-8 byte order mark from the start of `text`, if there is one: spreadsheet
// programs write it before the header, where it would become part of the first column's name.
void strip_byte_order_mark(std::string& text);

// `text` without the byte order marks that open any of its lines but the first: files joined
// with `cat` may each start with one (spreadsheets write one), and before a comment or a
// repeated header it hid them. The CSV reader takes off the first line's.
std::string without_joined_files_byte_order_marks(std::string text);

// The most a CSV file may hold: a shapes file, or an export with its cubins, is far smaller,
// and a device such as /dev/zero must not fill memory.
constexpr std::size_t kMaxCsvBytes = std::size_t{1} << 30;

// A stream longer than read_csv_text reads.
struct CsvTooLargeError : Error {
    using Error::Error;
};

// All of `in`, at most `max_bytes`; a longer stream throws CsvTooLargeError naming `source`.
std::string read_csv_text(std::istream& in, const std::string& source, std::size_t max_bytes = kMaxCsvBytes);

// Opens the file at `path` for reading, or throws Error naming it with the reason: it must
// be a regular file or a pipe (not a folder or a device) that this process can read.
std::ifstream open_csv_file(const std::string& path);
// Refuses standard input where there is no CSV to read from it: a folder (`< /tmp`) or a
// closed descriptor (`<&-`), whose failed reads would pass for an empty text ("no header").
// Throws Error naming "standard input".
void check_standard_input_for_csv();

// The CSV reader's error for an SQLite database handed over as CSV.
struct CsvIsADatabaseError : Error {
    using Error::Error;
};

// Whether a record that starts with '#' (after white space) is a comment, skipped to the end
// of its line. Only where a record starts: a line inside a quoted field is the field's text.
enum class CsvComments { none, hash_lines };

// The records of a CSV text one at a time, so that a caller that weighs each as it comes holds
// one record, not a copy of the file many times its size (an empty field takes 32 bytes for
// its comma's one). Blank lines, and lines of white space alone, are skipped, and comments as
// `comments` says. A record the text breaks comes with `error` set, "<source>:<line>: ...",
// and reading goes on at the next record, so a caller can name every bad line: text after a
// closing quote (passed over to the next comma or line break), or more than `max_fields`
// fields (those past it are counted, not kept). A quoted field that is never closed takes the
// text to its end, so it is the last record.
class CsvRecordReader {
public:
    // Throws Error "<source>:<line>: ..." for a NUL byte, CsvIsADatabaseError for a database
    // file: the text is no CSV at all, so no record of it is read.
    CsvRecordReader(std::string text, std::string source, CsvComments comments, std::size_t max_fields);
    // Whether there was another record, then in `record`.
    bool next(CsvRecord& record);

private:
    bool at_comment();
    std::string text_;
    std::string source_;
    CsvComments comments_;
    std::size_t max_fields_;
    std::size_t at_ = 0;
    int line_ = 1;
};

// Every record of `text` (after a byte order mark), as CsvRecordReader reads them; throws
// Error at the first record that has one.
std::vector<CsvRecord> parse_csv(std::string text, const std::string& source, CsvComments comments = CsvComments::none);
// parse_csv of all of `in` (at most kMaxCsvBytes), without comments.
std::vector<CsvRecord> read_csv(std::istream& in, const std::string& source);

}  // namespace sgemm
