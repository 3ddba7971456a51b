// CSV as RFC 4180 has it: comma-separated fields, quoted when they hold a comma, a quote or
// a line break, quotes doubled inside quotes. Records keep the line they start on, so an
// error can name it.
#pragma once
#include <istream>
#include <string>
#include <vector>

namespace sgemm {

// One record, with a line break.
std::string csv_line(const std::vector<std::string>& fields);

struct CsvRecord {
    int line = 0;  // 1-based line the record starts on
    std::vector<std::string> fields;
};

// Removes a UTF-8 byte order mark from the start of `text`, if there is one: spreadsheet
// programs write it before the header, where it would become part of the first column's name.
void strip_byte_order_mark(std::string& text);

// Every record of `in` (after a byte order mark); blank lines are skipped. Throws Error "<source>:<line>: ..." for a
// quoted field that never ends or text after a closing quote.
std::vector<CsvRecord> read_csv(std::istream& in, const std::string& source);

}  // namespace sgemm
