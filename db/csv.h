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

// Every record of `in`; blank lines are skipped. Throws Error "<source>:<line>: ..." for a
// quoted field that never ends or text after a closing quote.
std::vector<CsvRecord> read_csv(std::istream& in, const std::string& source);

}  // namespace sgemm
