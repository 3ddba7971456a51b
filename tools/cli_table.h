// Aligned tables for the tools' text output: sgemm-db's listings, sgemm-roofline's steps.
#pragma once
#include <string>
#include <vector>

namespace sgemm {

// Columns padded to their widest cell, so that no number, however long, breaks the layout;
// columns whose cells are all numbers are right-aligned.
class Table {
public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    // Cells may hold anything (a database an import filled, a name from a config): control
    // characters are escaped so that they neither break the table nor reach the terminal.
    void add(std::vector<std::string> row);
    bool empty() const { return rows_.empty(); }
    // Prints the header and the rows to standard output, each line after `indent`.
    void print(const std::string& indent = "") const;

private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

// A table cell: `v` with `digits` decimals; from 1e9 on, and where those decimals would show a
// value other than 0 as 0, in the form 1.2345e+09.
std::string fixed(double v, int digits);

}  // namespace sgemm
