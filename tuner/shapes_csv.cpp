#include "tuner/shapes_csv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "db/csv.h"
#include "src/util/parse_number.h"
#include "src/util/text.h"

namespace sgemm {
namespace {

// Whether `text` names fp32, spelt as parse_gemm_precision takes it.
bool is_fp32(const std::string& text) {
    try {
        return parse_gemm_precision(text) == GemmPrecision::fp32;
    } catch (const Error&) {
        return false;  // no precision at all: refused as any other that is not fp32
    }
}

// Far more than any model's shapes (a row is some 30 bytes): a larger input is not a shapes
// file, and reading it whole would cost memory for nothing.
constexpr std::size_t kMaxShapesCsvBytes = std::size_t{64} << 20;

const std::vector<std::string> kColumns = {"M", "N", "K", "transA", "transB", "precision", "weight", "name", "align"};

// Empty fields at the end of a line are a trailing comma (a spreadsheet's export pads every
// line, the header too; a hand edit), not data: dropped, as a blank line is, down to `keep`
// fields. A data row keeps as many as the header has columns: there an empty field is a value
// left out.
void drop_trailing_comma(CsvRecord& record, std::size_t keep) {
    while (record.fields.size() > keep && trim(record.fields.back()).empty()) {
        record.fields.pop_back();
        record.quoted.pop_back();
    }
}

// " has rows of N floats; ..." where a row of A, B or C is longer than any tune can check, else
// empty.
std::string rows_too_long(const ShapeKey& key) {
    const int longest_row = std::max({key.trans_a ? key.M : key.K, key.trans_b ? key.K : key.N, key.N});
    if (longest_row <= kLongestCheckedRow) return "";
    return " has rows of " + std::to_string(longest_row) + " floats; " + why_rows_are_limited();
}

[[noreturn]] void fail(const std::string& file, int line, const std::string& what) {
    throw ShapesCsvError(printable(file) + ":" + std::to_string(line) + ": " + what);
}

int parse_dimension(const std::string& text, const char* column, const std::string& file, int line) {
    try {
        return parse_gemm_size(text, column);
    } catch (const Error& e) {
        fail(file, line, e.what());
    }
}

bool parse_trans(const std::string& text, const char* column, const std::string& file, int line) {
    if (text.empty() || text == "N" || text == "n") return false;
    if (text == "T" || text == "t") return true;
    fail(file, line, std::string(column) + " must be N or T, not " + single_quoted(text));
}

// The field index of each column the header names.
std::map<std::string, std::size_t> columns_of_header(const CsvRecord& header, const std::string& file) {
    // No column is named by a number: a first field that is one is a row of shapes (the full
    // form's N, T, fp32 and name after it too), so the file has lost its header.
    if (parse_whole_number(trim(header.fields.front())).has_value())
        fail(file, header.line, "holds numbers, not column names: the file needs a header line first, such as M,N,K");
    std::map<std::string, std::size_t> at;  // column name -> field index
    for (std::size_t i = 0; i < header.fields.size(); ++i) {
        // Any case (m,n,k too), named as the columns' own spelling from here on.
        std::string name = trim(header.fields[i]);
        for (const std::string& column : kColumns)
            if (lower_case(name) == lower_case(column)) name = column;
        if (name.empty())
            fail(file, header.line, "column " + std::to_string(i + 1) + " of the header has no name (a comma too many?)");
        if (std::find(kColumns.begin(), kColumns.end(), name) == kColumns.end())
            fail(file, header.line, "unknown column " + single_quoted(name) + "; the columns are M,N,K,transA,transB,precision,weight,name,align");
        if (!at.emplace(name, i).second) fail(file, header.line, "column " + single_quoted(name) + " appears twice");
    }
    for (const char* required : {"M", "N", "K"})
        if (!at.count(required)) fail(file, header.line, std::string("the header has no column ") + required);
    return at;
}

}  // namespace

ShapesFile parse_shapes_csv(std::istream& in, const std::string& file) {
    // Records are weighed as they are read, and the first kBadLinesShown bad ones kept, so a
    // file of many empty fields (a comma is one byte, an empty field 32) or of bad lines costs
    // memory in proportion to its rows of shapes, not to its text.
    std::optional<CsvRecordReader> reader;
    try {
        reader.emplace(without_joined_files_byte_order_marks(read_csv_text(in, file, kMaxShapesCsvBytes)), file,
                       CsvComments::hash_lines, kMaxCsvFields);
    } catch (const Error& e) {
        throw ShapesCsvError(e.what());
    }
    // A row of empty fields (",,,": a spreadsheet's blank row) is a blank line, before the
    // header as after it.
    const auto all_empty = [](const CsvRecord& r) {
        return std::all_of(r.fields.begin(), r.fields.end(), [](const std::string& f) { return trim(f).empty(); });
    };
    CsvRecord header;
    bool found = false;
    while ((found = reader->next(header)) && header.error.empty() && all_empty(header)) {
    }
    if (!found) throw ShapesCsvError(printable(file) + ": no header: expected a line like M,N,K");
    if (!header.error.empty()) throw ShapesCsvError(header.error);  // no columns to read the rows by
    drop_trailing_comma(header, 0);
    const std::map<std::string, std::size_t> at = columns_of_header(header, file);
    // A later line the same as the header (any case, white space around its fields) is no
    // shape: two files joined (one model's rows and another's) repeat it, and it is passed over.
    const auto repeats_the_header = [&](const CsvRecord& rec) {
        return rec.fields.size() == header.fields.size() &&
               std::equal(rec.fields.begin(), rec.fields.end(), header.fields.begin(),
                          [](const std::string& a, const std::string& b) { return lower_case(trim(a)) == lower_case(trim(b)); });
    };

    ShapesFile out;
    std::map<std::string, std::size_t> seen;  // shape key text -> index in out.rows
    // Every bad row is named, not only the first: a file fixed line by line would otherwise
    // take a run per mistake. Past kBadLinesShown, they are counted.
    std::vector<std::string> bad_rows;
    std::size_t bad_lines = 0;
    std::size_t repeats = 0;  // rows merged into an earlier one: the first kBadLinesShown are named
    for (CsvRecord rec; reader->next(rec);) try {
        // A line the CSV reader could not split is a bad row like any other: the rows after it
        // are still weighed, and named.
        if (!rec.error.empty()) throw ShapesCsvError(rec.error);
        if (all_empty(rec)) continue;
        drop_trailing_comma(rec, header.fields.size());
        if (repeats_the_header(rec)) continue;
        // White space may stand around a field, but a quote opens one only as its first
        // character: ` "a,b"` is split at its comma, and ` "q"` keeps its quotes. Either is
        // most likely a quoted field meant, so it is refused, with the cause named. (A quoted
        // field's text, `" ""q"""`, is what its quotes hold, and may be anything.)
        std::size_t spaced_quote = rec.fields.size();
        for (std::size_t i = 0; i < rec.fields.size() && spaced_quote == rec.fields.size(); ++i) {
            const std::size_t first = rec.fields[i].find_first_not_of(" \t");
            if (!rec.quoted[i] && first != std::string::npos && first > 0 && rec.fields[i][first] == '"') spaced_quote = i;
        }
        if (rec.fields.size() != header.fields.size())
            fail(file, rec.line, "expected " + std::to_string(header.fields.size()) + " fields, found " +
                                     std::to_string(rec.fields.size()) +
                                     (spaced_quote < rec.fields.size()
                                          ? " (a quote opens a field only right after the comma: a quoted field after a "
                                            "space is split at the commas in it)"
                                          : ""));
        if (spaced_quote < rec.fields.size())
            fail(file, rec.line, "field " + std::to_string(spaced_quote + 1) + ", " + single_quoted(rec.fields[spaced_quote]) +
                                     ", has a quote after white space: a quote opens a field only as its first "
                                     "character, so this one is kept as text; write the field without the white space, "
                                     "or without the quotes");
        auto field = [&](const char* column) { return at.count(column) ? trim(rec.fields[at.at(column)]) : std::string(); };
        ShapeRow row;
        row.line = rec.line;
        row.key.M = parse_dimension(field("M"), "M", file, rec.line);
        row.key.N = parse_dimension(field("N"), "N", file, rec.line);
        row.key.K = parse_dimension(field("K"), "K", file, rec.line);
        row.key.trans_a = parse_trans(field("transA"), "transA", file, rec.line);
        row.key.trans_b = parse_trans(field("transB"), "transB", file, rec.line);
        // Only fp32 (the default) is tuned so far: tf32, which the database knows, and any
        // other text are refused alike, here, not when the tuner reaches the row (a run must
        // not fail halfway).
        if (!field("precision").empty() && !is_fp32(field("precision")))
            fail(file, rec.line, "precision " + single_quoted(field("precision")) + " is not tuned: only fp32 shapes are, so far");
        if (!field("weight").empty()) {
            const std::string w = field("weight");
            // strtod, not stod: stod refuses a positive weight too small for a normal double
            // (1e-310), which is still positive. Decimal only: both also read hexadecimal
            // ("0x10" as 16), which no one means here.
            char* end = nullptr;
            row.weight = std::strtod(w.c_str(), &end);
            const bool decimal = w.find_first_not_of("0123456789.eE+-") == std::string::npos;
            if (!decimal || *end != '\0' || !(row.weight > 0) || !std::isfinite(row.weight)) {
                // A positive number that reads as 0 (1e-400), or past the largest double (1e400), is
                // told why.
                const std::string mantissa = w.substr(0, w.find_first_of("eE"));
                const bool positive = decimal && *end == '\0' && w[0] != '-' &&
                                      mantissa.find_first_of("123456789") != std::string::npos;
                const char* why = !positive           ? ""
                                  : row.weight == 0   ? " (it is below the smallest a double holds, about 4.9e-324)"
                                  : std::isinf(row.weight) ? " (it is above the largest a double holds, about 1.8e308)"
                                                           : "";
                fail(file, rec.line, "weight " + single_quoted(w) + " must be a positive number" + why);
            }
        }
        row.name = field("name");
        if (has_control_character(row.name))
            fail(file, rec.line, "the name " + single_quoted(row.name) + " holds a control or invisible character; names "
                                 "are printed in tables and progress lines");

        // A shape is tuned on tightly packed operands, so at their class, unless `align` names
        // another: the class of an engine's padded or offset buffers, which the tuner then
        // lays out (operands_for). Duplicates are told apart by the whole key.
        row.key.alignment = packed_alignment(row.key);
        if (const std::string align = field("align"); !align.empty()) {
            if (align != "16" && align != "8" && align != "4")
                fail(file, rec.line, "align " + single_quoted(align) + " must be 16, 8 or 4 (bytes), or empty for tightly packed "
                                     "operands");
            row.key.alignment = std::stoi(align);
        }
        // Past what any GPU can tune: a bad row of the file, not a note for a GPU with more memory.
        if (const std::string too_long = rows_too_long(row.key); !too_long.empty())
            fail(file, rec.line, row.key.to_string() + too_long);
        const std::string key = row.key.to_string();
        const auto dup = seen.find(key);
        if (dup != seen.end()) {
            ShapeRow& first = out.rows[dup->second];
            first.weight += row.weight;
            // The names join as sgemm-shapes joins the projections of one shape ("k/v"), each once,
            // a part known by its words alone ("k / v" holds v: it made "k / v/v").
            for (const std::string& raw : split(row.name, '/')) {
                const std::string part = trim(raw);
                const std::vector<std::string> joined = split(first.name, '/');
                const bool known = std::any_of(joined.begin(), joined.end(),
                                               [&part](const std::string& have) { return trim(have) == part; });
                if (!part.empty() && !known) first.name += (first.name.empty() ? "" : "/") + part;
            }
            if (!std::isfinite(first.weight))
                fail(file, rec.line, key + ": its weights add up past the largest number");
            if (++repeats <= kBadLinesShown)
                out.warnings.push_back(printable(file) + ":" + std::to_string(rec.line) + ": " + key + " repeats line " +
                                       std::to_string(first.line) + "; merged (weights added)");
            continue;
        }
        seen.emplace(key, out.rows.size());
        out.rows.push_back(row);
    } catch (const ShapesCsvError& e) {
        if (++bad_lines <= kBadLinesShown) bad_rows.push_back(e.what());
    }
    if (bad_lines == 1) throw ShapesCsvError(bad_rows.front());
    if (bad_lines > 1) {
        std::string message = std::to_string(bad_lines) + " bad lines in " + printable(file) + ":";
        for (const std::string& bad : bad_rows) message += "\n  " + bad;
        if (bad_lines > bad_rows.size()) message += "\n  and " + std::to_string(bad_lines - bad_rows.size()) + " more";
        throw ShapesCsvError(message);
    }
    if (out.rows.empty()) throw ShapesCsvError(printable(file) + ": no shapes after the header");
    if (repeats > kBadLinesShown)
        out.warnings.push_back(printable(file) + ": and " + std::to_string(repeats - kBadLinesShown) +
                               " more lines repeat a shape above; merged (weights added)");
    return out;
}

ShapesFile load_shapes_csv(const std::string& path) {
    try {
        if (path == "-") {  // sgemm-shapes ... | sgemm-tune --shapes -
            check_standard_input_for_csv();
            return parse_shapes_csv(std::cin, "standard input");
        }
        std::ifstream in = open_csv_file(path);
        return parse_shapes_csv(in, path);
    } catch (const ShapesCsvError&) {
        throw;
    } catch (const Error& e) {
        throw ShapesCsvError(e.what());
    }
}

double tuning_bytes(const ShapeKey& key, bool fp64_reference) {
    const double m = key.M, n = key.N, k = key.K;
    const double a_rows = key.trans_a ? k : m, b_rows = key.trans_b ? n : k;
    // Floats (the fp64 copies: twice as many bytes). A key of another class than packed
    // operands have is tuned on rows up to 3 floats longer (operands_for).
    const double padding = key.alignment == packed_alignment(key) ? 0.0 : 3.0;
    const double a = m * k + padding * a_rows, b = k * n + padding * b_rows, c = m * n + padding * m;
    const double resident = a + b + 2.0 * c;                           // A, B, C's first values, the output
    const double beside = fp64_reference ? 2.0 * (a + b + c) : a + b;  // fp64 copies, or |A| and |B|
    // Then the copies laid out anew (GemmProblem's second constructor) beside the first, one
    // in class 16 and up to three below (later_layouts_for: three where the tuner's operands
    // have none aligned, as at any class but their packed one): each row of A, B and C up to
    // 7 floats longer than it is.
    const double laid_out_anew = (key.alignment == 16 ? 1.0 : 3.0) *
                                 (m * k + k * n + 2.0 * m * n + 7.0 * (a_rows + b_rows + 2.0 * m));
    return 1.1 * 4.0 * (resident + std::max(beside, laid_out_anew));
}

namespace {
// Why `row` does not fit in `device_bytes`, or empty when it does.
std::string too_large(const ShapeRow& row, const std::string& file_name, std::size_t device_bytes, bool fp64_reference) {
    const double need = tuning_bytes(row.key, fp64_reference);
    std::string text = rows_too_long(row.key);
    if (text.empty() && need > static_cast<double>(device_bytes)) {
        char fit[120];
        std::snprintf(fit, sizeof fit, " needs %.1f GiB of device memory for tuning; the GPU has %.1f GiB",
                      need / 1073741824.0, device_bytes / 1073741824.0);
        text = fit;
    }
    if (text.empty()) return "";
    const std::string where = row.line > 0 ? file_name + ":" + std::to_string(row.line) : file_name;
    const std::string named = row.line > 0 || row.name.empty() ? "" : " (" + row.name + ")";
    return where + ": " + row.key.to_string() + named + text;
}
}  // namespace

std::vector<std::string> shapes_too_large(const ShapesFile& shapes, const std::string& file_name,
                                          std::size_t device_bytes, bool fp64_reference) {
    std::vector<std::string> found;
    for (const ShapeRow& row : shapes.rows)
        if (std::string why = too_large(row, file_name, device_bytes, fp64_reference); !why.empty())
            found.push_back(std::move(why));
    return found;
}

std::vector<std::string> drop_shapes_too_large(ShapesFile& shapes, const std::string& file_name, std::size_t device_bytes,
                                               bool fp64_reference) {
    std::vector<std::string> dropped;
    std::vector<ShapeRow> kept;
    for (ShapeRow& row : shapes.rows) {
        if (std::string why = too_large(row, file_name, device_bytes, fp64_reference); !why.empty())
            dropped.push_back(std::move(why));
        else
            kept.push_back(std::move(row));
    }
    shapes.rows = std::move(kept);
    return dropped;
}

}  // namespace sgemm
