#include "tools/cli_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "src/util/text.h"

namespace sgemm {
namespace {

bool is_number(const std::string& s) {
    return !s.empty() && (s == "-" || s.find_first_not_of("0123456789.x-e+") == std::string::npos);
}

}  // namespace

std::string fixed(double v, int digits) {
    // Past a billion the fixed form gives digits no measurement has: a time edited by hand to
    // 1e308 ran to 309 of them, cut to a wrong number at this buffer's end. Such a value is
    // given with a power of ten; so is one other than 0 whose `digits` decimals come out all
    // zeros (a tiny model's GFLOP per step, which read 0.000), as printf rounds it.
    char buf[64];
    std::snprintf(buf, sizeof buf, std::isfinite(v) && std::fabs(v) >= 1e9 ? "%.*e" : "%.*f", digits, v);
    const bool shown_as_zero = std::string(buf).find_first_of("123456789") == std::string::npos;
    if (v != 0 && std::isfinite(v) && shown_as_zero) std::snprintf(buf, sizeof buf, "%.*e", digits, v);
    return buf;
}

void Table::add(std::vector<std::string> row) {
    for (std::string& cell : row) cell = printable(cell);
    rows_.push_back(std::move(row));
}

void Table::print(const std::string& indent) const {
    std::vector<std::size_t> width(header_.size());
    std::vector<bool> numeric(header_.size(), true);
    for (std::size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
    for (const auto& row : rows_)
        for (std::size_t c = 0; c < row.size(); ++c) {
            width[c] = std::max(width[c], row[c].size());
            numeric[c] = numeric[c] && is_number(row[c]);
        }
    const auto line = [&](const std::vector<std::string>& cells) {
        std::string out = indent;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            const std::string pad(width[c] - cells[c].size(), ' ');
            const bool last = c + 1 == cells.size();
            out += numeric[c] ? pad + cells[c] : cells[c] + (last ? "" : pad);
            if (!last) out += "  ";
        }
        std::printf("%s\n", out.c_str());
    };
    line(header_);
    for (const auto& row : rows_) line(row);
}

}  // namespace sgemm
