#include "db/exchange.h"

#include "src/util/parse_number.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <regex>

#include "db/base64.h"
#include "db/csv.h"
#include "db/verify.h"
#include "db/version_numbers.h"
#include "src/util/json.h"
#include "src/util/text.h"

namespace sgemm {

namespace {
// What to do where a CSV export is more than import reads (kMaxCsvBytes): said by the export
// that writes one and by the import that refuses one.
constexpr const char* kWayPastImportsLimit =
    "export each device alone (sgemm-db export --device ID) and import each file on its own, or share the "
    "database file itself, which sgemm-db merge takes";

// How a column's text maps to JSON: a number, or a string (null when empty). An import reads
// a number without the white space around it.
enum class Kind { Integer, Real, Text };

struct Column {
    const char* name;
    Kind kind;
    std::function<std::string(const ExportRow&)> get;
    std::function<void(ExportRow&, const std::string&)> set;  // throws Error naming the problem
    bool of_binary = false;  // empty in the row of a cuBLAS winner, which has no binary
    bool since_later_export = false;  // an export from before it was added lacks the column
};

std::string exact(double v) {  // enough digits to read back the same double
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

long long parse_integer(const std::string& text) {
    const std::optional<long long> v = parse_whole_number(text);
    if (!v) throw Error(single_quoted(text) + " is not an integer");
    return *v;
}

int parse_int(const std::string& text) {
    const long long v = parse_integer(text);
    if (v < INT32_MIN || v > INT32_MAX) throw Error(single_quoted(text) + " is out of range");
    return static_cast<int>(v);
}

int parse_positive(const std::string& text) {
    const int v = parse_int(text);
    if (v <= 0) throw Error(single_quoted(text) + " is not positive");
    return v;
}

// A count of bytes, registers or versions: 0 or more.
int parse_count(const std::string& text) {
    const int v = parse_int(text);
    if (v < 0) throw Error(single_quoted(text) + " must be 0 or more");
    return v;
}

// A winner's time of tuning as the database writes it, 2026-11-30T12:34:56.789Z (UTC), so that
// tables and merges read it alike; empty means now.
std::string parse_timestamp(const std::string& text) {
    static const std::regex form(R"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?Z)");
    if (text.empty()) return text;
    if (std::regex_match(text, form)) {
        const int year = std::stoi(text.substr(0, 4)), month = std::stoi(text.substr(5, 2)), day = std::stoi(text.substr(8, 2));
        const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        const int days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        if (day <= days[month - 1]) return text;
    }
    throw Error(single_quoted(text) + " is not a time as the database writes it (2026-11-30T12:34:56.789Z, UTC), nor empty");
}

// A finite number. strtod, not std::stod: stod refuses a number too small for a normal
// double (1e-320), which is still a number.
double parse_real(const std::string& text) {
    char* end = nullptr;
    const double v = text.empty() || std::isspace(static_cast<unsigned char>(text[0])) ? 0 : std::strtod(text.c_str(), &end);
    if (!end || *end != '\0') throw Error(single_quoted(text) + " is not a number");
    if (std::isnan(v)) throw Error(single_quoted(text) + " is not a number");
    if (!std::isfinite(v)) throw Error(single_quoted(text) + " is not a finite number (the largest is about 1.8e308)");
    return v;
}

// A time: above 0. A negative or zero one would beat every real winner in a merge.
double parse_duration_ms(const std::string& text) {
    const double v = parse_real(text);
    if (!(v > 0)) throw Error(single_quoted(text) + " must be above 0");
    return v;
}

double parse_non_negative(const std::string& text) {
    const double v = parse_real(text);
    if (v < 0) throw Error(single_quoted(text) + " must be at least 0");
    return v;
}

// The binary's fields are empty for a cuBLAS winner; reading any of them creates it.
Binary& binary_of(ExportRow& r) {
    if (!r.entry.binary) r.entry.binary = Binary{};
    return *r.entry.binary;
}

template <class T>
std::string binary_field(const ExportRow& r, T Binary::*field) {
    if (!r.entry.binary) return "";
    const T& value = (*r.entry.binary).*field;
    if constexpr (std::is_same_v<T, std::string>)
        return value;
    else if constexpr (std::is_same_v<T, double>)
        return exact(value);
    else
        return std::to_string(value);
}

const std::vector<Column>& columns() {
    static const std::vector<Column> all = {
        {"device_id", Kind::Text, [](const ExportRow& r) { return r.entry.winner.device_id; },
         [](ExportRow& r, const std::string& v) { r.entry.winner.device_id = v; }},
        {"gpu_name", Kind::Text, [](const ExportRow& r) { return r.device.gpu_name; },
         [](ExportRow& r, const std::string& v) { r.device.gpu_name = v; }},
        {"cc_major", Kind::Integer, [](const ExportRow& r) { return std::to_string(r.device.cc_major); },
         [](ExportRow& r, const std::string& v) { r.device.cc_major = parse_count(v); }},
        {"cc_minor", Kind::Integer, [](const ExportRow& r) { return std::to_string(r.device.cc_minor); },
         [](ExportRow& r, const std::string& v) { r.device.cc_minor = parse_count(v); }},
        {"sm_count", Kind::Integer, [](const ExportRow& r) { return std::to_string(r.device.sm_count); },
         [](ExportRow& r, const std::string& v) { r.device.sm_count = parse_positive(v); }},
        {"memory_bytes", Kind::Integer, [](const ExportRow& r) { return std::to_string(r.device.memory_bytes); },
         [](ExportRow& r, const std::string& v) {
             r.device.memory_bytes = parse_integer(v);
             if (r.device.memory_bytes <= 0) throw Error(single_quoted(v) + " is not positive");
         }},
        {"driver_version", Kind::Integer, [](const ExportRow& r) { return std::to_string(r.device.driver_version); },
         [](ExportRow& r, const std::string& v) { r.device.driver_version = parse_count(v); }},
        {"runtime_version", Kind::Integer, [](const ExportRow& r) { return std::to_string(r.device.runtime_version); },
         [](ExportRow& r, const std::string& v) { r.device.runtime_version = parse_count(v); }},
        {"nvrtc_version", Kind::Text, [](const ExportRow& r) { return r.device.nvrtc_version; },
         [](ExportRow& r, const std::string& v) { r.device.nvrtc_version = v; }},
        {"library_version", Kind::Text, [](const ExportRow& r) { return r.device.library_version; },
         [](ExportRow& r, const std::string& v) {
             if (!is_build_version(v))
                 throw Error(single_quoted(v) + " is not a version as builds write it (three numbers, as 0.3.0, and an "
                             "optional -label or +label)");
             r.device.library_version = v;
         }},
        {"m", Kind::Integer, [](const ExportRow& r) { return std::to_string(r.entry.winner.shape.M); },
         [](ExportRow& r, const std::string& v) { r.entry.winner.shape.M = parse_positive(v); }},
        {"n", Kind::Integer, [](const ExportRow& r) { return std::to_string(r.entry.winner.shape.N); },
         [](ExportRow& r, const std::string& v) { r.entry.winner.shape.N = parse_positive(v); }},
        {"k", Kind::Integer, [](const ExportRow& r) { return std::to_string(r.entry.winner.shape.K); },
         [](ExportRow& r, const std::string& v) { r.entry.winner.shape.K = parse_positive(v); }},
        {"trans", Kind::Text, [](const ExportRow& r) { return r.entry.winner.shape.transposes(); },
         [](ExportRow& r, const std::string& v) { parse_transposes(v, r.entry.winner.shape); }},
        {"precision", Kind::Text, [](const ExportRow& r) { return to_string(r.entry.winner.shape.precision); },
         [](ExportRow& r, const std::string& v) { r.entry.winner.shape.precision = parse_gemm_precision(v); }},
        {"alignment", Kind::Integer, [](const ExportRow& r) { return std::to_string(r.entry.winner.shape.alignment); },
         [](ExportRow& r, const std::string& v) {
             r.entry.winner.shape.alignment = parse_int(v);
             if (!valid_alignment_class(r.entry.winner.shape.alignment)) throw Error(single_quoted(v) + " is not 4, 8 or 16");
         }},
        {"family", Kind::Text, [](const ExportRow& r) { return r.entry.winner.kernel.family; },
         [](ExportRow& r, const std::string& v) { r.entry.winner.kernel.family = v; }},
        {"params", Kind::Text, [](const ExportRow& r) { return params_text(r.entry.winner.kernel.params); },
         [](ExportRow& r, const std::string& v) { r.entry.winner.kernel.params = parse_params(v); }},
        {"description", Kind::Text, [](const ExportRow& r) { return r.entry.winner.kernel.description; },
         [](ExportRow& r, const std::string& v) { r.entry.winner.kernel.description = v; }},
        {"template_hash", Kind::Text, [](const ExportRow& r) { return r.entry.winner.kernel.template_hash; },
         [](ExportRow& r, const std::string& v) { r.entry.winner.kernel.template_hash = v; }},
        {"ms", Kind::Real, [](const ExportRow& r) { return exact(r.entry.winner.ms); },
         [](ExportRow& r, const std::string& v) { r.entry.winner.ms = parse_duration_ms(v); }},
        {"cublas_ms", Kind::Real, [](const ExportRow& r) { return exact(r.entry.winner.cublas_ms); },
         [](ExportRow& r, const std::string& v) { r.entry.winner.cublas_ms = parse_duration_ms(v); }},
        {"tolerance", Kind::Real, [](const ExportRow& r) { return exact(r.entry.winner.tolerance); },
         [](ExportRow& r, const std::string& v) { r.entry.winner.tolerance = parse_non_negative(v); }},
        {"provenance", Kind::Text, [](const ExportRow& r) { return r.entry.winner.provenance; },
         [](ExportRow& r, const std::string& v) { r.entry.winner.provenance = v; }},
        {"tuned_at", Kind::Text, [](const ExportRow& r) { return r.entry.winner.tuned_at; },
         [](ExportRow& r, const std::string& v) { r.entry.winner.tuned_at = parse_timestamp(v); }},
        {"narrowed_by", Kind::Text, [](const ExportRow& r) { return r.entry.winner.narrowed_by; },
         [](ExportRow& r, const std::string& v) { r.entry.winner.narrowed_by = v; }, false, true},
        {"binary_key", Kind::Text, [](const ExportRow& r) { return r.entry.winner.binary_key; },
         [](ExportRow& r, const std::string& v) { r.entry.winner.binary_key = v; }},
        {"arch", Kind::Integer, [](const ExportRow& r) { return binary_field(r, &Binary::arch); },
         [](ExportRow& r, const std::string& v) { binary_of(r).arch = parse_positive(v); }, true},
        {"binary_nvrtc_version", Kind::Text, [](const ExportRow& r) { return binary_field(r, &Binary::nvrtc_version); },
         [](ExportRow& r, const std::string& v) { binary_of(r).nvrtc_version = v; }, true},
        {"lowered_name", Kind::Text, [](const ExportRow& r) { return binary_field(r, &Binary::lowered_name); },
         [](ExportRow& r, const std::string& v) { binary_of(r).lowered_name = v; }, true},
        {"registers", Kind::Integer, [](const ExportRow& r) { return binary_field(r, &Binary::registers); },
         [](ExportRow& r, const std::string& v) { binary_of(r).registers = parse_count(v); }, true},
        {"shared_bytes", Kind::Integer, [](const ExportRow& r) { return binary_field(r, &Binary::shared_bytes); },
         [](ExportRow& r, const std::string& v) { binary_of(r).shared_bytes = parse_count(v); }, true},
        {"stack_bytes", Kind::Integer, [](const ExportRow& r) { return binary_field(r, &Binary::stack_bytes); },
         [](ExportRow& r, const std::string& v) { binary_of(r).stack_bytes = parse_count(v); }, true},
        {"spill_store_bytes", Kind::Integer, [](const ExportRow& r) { return binary_field(r, &Binary::spill_store_bytes); },
         [](ExportRow& r, const std::string& v) { binary_of(r).spill_store_bytes = parse_count(v); }, true},
        {"spill_load_bytes", Kind::Integer, [](const ExportRow& r) { return binary_field(r, &Binary::spill_load_bytes); },
         [](ExportRow& r, const std::string& v) { binary_of(r).spill_load_bytes = parse_count(v); }, true},
        {"compile_ms", Kind::Real, [](const ExportRow& r) { return binary_field(r, &Binary::compile_ms); },
         [](ExportRow& r, const std::string& v) { binary_of(r).compile_ms = parse_non_negative(v); }, true},
        {"cubin_base64", Kind::Text,
         [](const ExportRow& r) { return r.entry.binary ? base64_encode(r.entry.binary->cubin) : std::string(); },
         [](ExportRow& r, const std::string& v) { binary_of(r).cubin = base64_decode(v); }, true},
        // The checksum travels with the cubin, so that an import sees damage in transit.
        {"cubin_checksum", Kind::Text, [](const ExportRow& r) { return binary_field(r, &Binary::cubin_checksum); },
         [](ExportRow& r, const std::string& v) { binary_of(r).cubin_checksum = v; }, true, true},
    };
    return all;
}

Json json_value(const Column& column, const std::string& text) {
    if (text.empty()) return Json();
    switch (column.kind) {
        case Kind::Integer: return Json(parse_integer(text));
        case Kind::Real: return Json(parse_real(text));
        case Kind::Text: return Json(text);
    }
    return Json();
}

// Reads one CSV record into a row, or says what is wrong with it.
std::string read_row(const std::vector<const Column*>& header, const CsvRecord& record, ExportRow& row) {
    if (record.fields.size() != header.size())
        return std::to_string(record.fields.size()) + " fields, the header has " + std::to_string(header.size());
    std::string blank_of_binary;  // the first column of the binary left blank, which a binary needs
    for (std::size_t i = 0; i < header.size(); ++i) {
        // White space around a number is no part of it, as around a word (" NT", " fp32") and
        // in the shapes file: a file edited by hand reads as it was meant.
        const std::string trimmed = trim(record.fields[i]);
        const std::string& text = header[i]->kind == Kind::Text ? record.fields[i] : trimmed;
        // A cuBLAS winner has no binary, so its binary's columns are blank.
        if (header[i]->of_binary && trimmed.empty()) {
            if (blank_of_binary.empty() && !header[i]->since_later_export) blank_of_binary = header[i]->name;
            continue;
        }
        try {
            header[i]->set(row, text);
        } catch (const Error& e) {
            return std::string("column ") + header[i]->name + ": " + e.what();
        }
    }
    const Winner& w = row.entry.winner;
    if (w.device_id != row.device.id())
        return "device_id " + printable(w.device_id) + " does not match the row's fingerprint, whose id is " + row.device.id();
    if (w.kernel.is_cublas() != !row.entry.binary)
        return w.kernel.is_cublas() ? "a cuBLAS winner with a binary" : "a winner with no binary (cubin_base64 is empty)";
    // Else a blank count would read as 0, which the binary's figures would then claim: no
    // registers, no shared memory, which the cost model would rank by.
    if (row.entry.binary && !blank_of_binary.empty()) return "column " + blank_of_binary + ": blank, in a row with a binary";
    // The key would name a binary that is not there (the database refuses that).
    if (w.kernel.is_cublas() && !w.binary_key.empty()) return "a cuBLAS winner with a binary_key";
    if (row.entry.binary) {
        row.entry.binary->cache_key = w.binary_key;
        row.entry.binary->kernel = w.kernel;
        if (w.binary_key.empty()) return "a binary with no binary_key";
        if (const std::string problem = binary_problem(*row.entry.binary, row.device); !problem.empty())
            return "the binary: " + problem;
    }
    return "";
}

// The fields export writes for `row`, in the order of columns().
std::vector<std::string> row_fields(const ExportRow& row) {
    std::vector<std::string> fields;
    for (const Column& c : columns()) fields.push_back(c.get(row));
    return fields;
}

// What import would say of a row of these fields, read back as it reads them (a database
// edited by hand can hold a time in another form, a negative tolerance or an infinite one), or
// "". A NUL byte, which its CSV reader refuses in the whole file, is named by its column.
std::string import_problem(const std::vector<std::string>& fields) {
    std::vector<const Column*> header;
    for (const Column& c : columns()) header.push_back(&c);
    for (std::size_t i = 0; i < fields.size(); ++i)
        if (fields[i].find('\0') != std::string::npos)
            return std::string("column ") + header[i]->name + ": holds a NUL byte, which no CSV import reads";
    ExportRow read_back;
    return read_row(header, CsvRecord{0, fields, {}, {}}, read_back);
}

// Whether `record` is a header: every field a column's name, or the first field the first
// column's name (device_id), which no row holds (a row's is a device's id).
bool is_a_header(const CsvRecord& record) {
    const auto names_a_column = [](const std::string& field) {
        return std::any_of(columns().begin(), columns().end(), [&](const Column& c) { return field == c.name; });
    };
    return !record.fields.empty() && (record.fields.front() == columns().front().name ||
                                      std::all_of(record.fields.begin(), record.fields.end(), names_a_column));
}

}  // namespace

std::string exported_row_problem(const DeviceFingerprint& device, const WinnerWithBinary& entry) {
    return import_problem(row_fields(ExportRow{device, entry}));
}

ExchangeFormat parse_exchange_format(const std::string& text) {
    const std::string name = chosen_word(text);
    if (name == "csv") return ExchangeFormat::csv;
    if (name == "json") return ExchangeFormat::json;
    throw Error("unknown format " + single_quoted(text) + " (expected csv or json)");
}

std::vector<std::string> exchange_columns() {
    std::vector<std::string> names;
    for (const Column& c : columns()) names.push_back(c.name);
    return names;
}

ExportSummary export_winners(TuningStore& store, std::ostream& out, ExchangeFormat format,
                             const std::string& device_id, const KernelProblem& kernel_problem) {
    Json rows = Json::array();
    ExportSummary summary;
    std::vector<std::string>& left_out = summary.left_out;
    for (const TuningStore::EditedDeviceRow& row : store.edited_device_rows())
        if (row.winners > 0 && (device_id.empty() || row.fields.id() == device_id || row.stored_id == device_id))
            left_out.push_back(edited_device_problem(row) + ", left out of the export");
    if (const std::int64_t dangling = store.dangling_winners(device_id); dangling > 0)
        left_out.push_back(std::to_string(dangling) + " winners whose device or kernel row is missing (deleted by hand?): "
                           "no lookup finds them, left out of the export (sgemm-db verify names each)");
    const auto write_csv_line = [&out, &summary](const std::vector<std::string>& fields) {
        const std::string line = csv_line(fields);
        summary.csv_bytes += line.size();
        out << line;
    };
    if (format == ExchangeFormat::csv) write_csv_line(exchange_columns());
    for (const TuningStore::DeviceRow& device_row : store.device_rows()) {
        // An edited row (named above) is passed over: where its fields now read as another
        // device's, its computed id would fetch that device's winners a second time.
        if (device_row.fields.id() != device_row.stored_id) continue;
        const DeviceFingerprint& device = device_row.fields;
        if (!device_id.empty() && device.id() != device_id) continue;
        for (WinnerWithBinary& entry : store.winners_with_binaries(device.id())) {
            // What an import would refuse is left out here, and said, rather than found on the
            // machine the file goes to.
            std::string problem = winner_time_problem(entry.winner, &device);
            if (problem.empty() && !entry.winner.kernel.is_cublas())
                problem = entry.binary ? binary_problem(*entry.binary, device)
                                       : "its binary " + entry.winner.binary_key + " is missing";
            if (problem.empty()) problem = stored_binary_problem(store, entry.winner);
            const ExportRow row{device, std::move(entry)};
            const std::vector<std::string> fields = problem.empty() ? row_fields(row) : std::vector<std::string>{};
            if (problem.empty())
                if (const std::string refused = import_problem(fields); !refused.empty())
                    problem = "an import would refuse its row: " + refused;
            if (problem.empty() && kernel_problem)
                if (const std::string refused = kernel_problem(row.entry.winner, device); !refused.empty())
                    problem = "an import would refuse it: " + refused;
            if (!problem.empty()) {
                left_out.push_back(row.entry.winner.where() + ": " + problem);
                continue;
            }
            ++summary.exported;
            if (format == ExchangeFormat::csv) {
                write_csv_line(fields);
                continue;
            }
            Json object = Json::object();
            for (std::size_t i = 0; i < fields.size(); ++i) object.set(columns()[i].name, json_value(columns()[i], fields[i]));
            rows.push(std::move(object));
        }
    }
    if (format == ExchangeFormat::json) out << rows.dump() << "\n";
    return summary;
}

std::string too_large_to_import(const ExportSummary& summary) {
    if (summary.csv_bytes <= kMaxCsvBytes) return "";
    return "this export is " + std::to_string(summary.csv_bytes) + " bytes, more than the " + std::to_string(kMaxCsvBytes) +
           " an import reads (each row carries its cubin): " + kWayPastImportsLimit;
}

std::vector<ExportRow> read_export(std::istream& in, const std::string& source, std::size_t max_bytes) {
    // export --format json writes an array of objects: a likely slip, so it is named before
    // the CSV reader stumbles on it.
    if (const int first = in.peek(); first == '[' || first == '{')
        throw ImportError(printable(source) + ": is JSON, not CSV; import reads what export --format csv writes (the default)");
    // Rows are read one by one, so a file of many empty fields (a comma is one byte, an empty
    // field 32) costs no more memory than its text.
    std::optional<CsvRecordReader> reader;
    CsvRecord first_line;
    try {
        reader.emplace(without_joined_files_byte_order_marks(read_csv_text(in, source, max_bytes)), source,
                       CsvComments::none, kMaxCsvFields);
        if (!reader->next(first_line)) throw ImportError(printable(source) + ": empty file (expected a header line)");
    } catch (const CsvIsADatabaseError& e) {
        throw ImportError(e.what() + std::string(" (merge brings in a database's winners)"));
    } catch (const CsvTooLargeError&) {
        // export writes such a file, saying so (too_large_to_import): the same way out.
        throw ImportError(printable(source) + ": larger than " + std::to_string(max_bytes) +
                          " bytes, more than an import reads: " + kWayPastImportsLimit);
    } catch (const ImportError&) {
        throw;
    } catch (const Error& e) {
        throw ImportError(e.what());
    }
    if (!first_line.error.empty()) throw ImportError(first_line.error);  // no columns to read the rows by

    std::vector<const Column*> header;  // the column of each field of the first line, or null
    std::string repeated;  // columns the header names more than once: which value would count?
    for (const std::string& name : first_line.fields) {
        const Column* found = nullptr;
        for (const Column& c : columns())
            if (name == c.name) found = &c;
        if (found && std::find(header.begin(), header.end(), found) != header.end())
            repeated += (repeated.empty() ? "" : ", ") + single_quoted(name);
        header.push_back(found);
    }
    // A file whose first line names none of the columns is not an export at all (another
    // CSV, a database file): one line says so, not one per missing column.
    if (std::all_of(header.begin(), header.end(), [](const Column* c) { return c == nullptr; }))
        throw ImportError(printable(source) + ": not a CSV export of sgemm-db: its first line names none of the columns "
                          "export writes (device_id, gpu_name, ...)");
    // The header's problems are one bad line, however many columns it lacks.
    std::string unknown, missing;
    for (std::size_t i = 0; i < header.size(); ++i)
        if (!header[i]) unknown += (unknown.empty() ? "" : ", ") + single_quoted(first_line.fields[i]);
    for (const Column& c : columns()) {
        bool present = c.since_later_export;
        for (const Column* h : header) present = present || h == &c;
        if (!present) missing += (missing.empty() ? "" : ", ") + single_quoted(c.name);
    }
    // A file that is wholly wrong (another table) would print a line for each of its rows: the
    // first kBadLinesShown are named, and the rest counted.
    std::vector<std::string> problems;
    std::size_t bad_lines = 0;
    const auto bad_line = [&](std::string what) {
        if (++bad_lines <= kBadLinesShown) problems.push_back(std::move(what));
    };
    if (!unknown.empty() || !missing.empty() || !repeated.empty()) {
        std::vector<std::string> faults;
        // Every column this build writes, and more: a later build's export, whose new columns
        // this one cannot weigh (an older file, without a later column, imports).
        if (!unknown.empty())
            faults.push_back("has unknown columns " + unknown +
                             (missing.empty() ? " (an export of a later sgemm-db? this one imports the columns it "
                                                "writes, and an export of this one imports into a later one)"
                                              : ""));
        if (!missing.empty()) faults.push_back("lacks columns " + missing);
        if (!repeated.empty()) faults.push_back("names columns " + repeated + " more than once");
        std::string text;
        for (std::size_t i = 0; i < faults.size(); ++i) text += (i ? " and " : "") + faults[i];
        bad_line(printable(source) + ":" + std::to_string(first_line.line) + ": the header " + text);
    }
    std::vector<ExportRow> rows;
    // An export writes one row per device and shape. A second (a file edited or pasted
    // together by hand) would be weighed against the first as if it were stored already,
    // and which one stays would hang on their order.
    std::map<std::string, int> line_of_key;
    bool joined = false;  // a line repeated the header: files joined with cat
    if (bad_lines == 0)
        for (CsvRecord record; reader->next(record);) {
            // A line the CSV reader could not split is one bad line among the others.
            if (!record.error.empty()) {
                bad_line(record.error);
                continue;
            }
            // The header again: exports joined with cat read as one. Another header (an
            // export of another build, its columns other or in another order) would be read
            // as a row and fail on a column; it is named instead.
            if (record.fields == first_line.fields) {
                joined = true;
                continue;
            }
            if (is_a_header(record)) {
                bad_line(printable(source) + ":" + std::to_string(record.line) + ": a header unlike line " +
                         std::to_string(first_line.line) + "'s (exports of different sgemm-db builds joined? " +
                         "import each file on its own)");
                continue;
            }
            ExportRow row;
            row.line = record.line;
            std::string problem = read_row(header, record, row);
            if (problem.empty()) {
                compute_figures(row.entry.winner);
                const std::string key = row.device.id() + " " + row.entry.winner.shape.to_string();
                const auto [first, fresh] = line_of_key.emplace(key, row.line);
                if (!fresh)
                    problem = "a second row for device " + row.device.id().substr(0, 8) + " and " +
                              row.entry.winner.shape.to_string() + " (the first is line " +
                              std::to_string(first->second) + "); an export has one row per device and shape" +
                              (joined ? " (exports joined that hold the same device import one at a time)" : "");
            }
            if (!problem.empty())
                bad_line(printable(source) + ":" + std::to_string(record.line) + ": " + printable(problem));
            else
                rows.push_back(std::move(row));
        }
    if (bad_lines > 0) {
        std::string message = std::to_string(bad_lines) + " bad line" + (bad_lines > 1 ? "s" : "") + ", nothing imported:";
        for (const std::string& p : problems) message += "\n  " + p;
        if (bad_lines > problems.size()) message += "\n  and " + std::to_string(bad_lines - problems.size()) + " more";
        throw ImportError(message);
    }
    return rows;
}

MergeSummary import_winners(TuningStore& store, const std::vector<ExportRow>& rows, const std::string& source,
                            const KernelProblem& kernel_problem) {
    MergeSummary summary;
    sqlite::Transaction transaction(store.connection());
    for (const ExportRow& row : rows) {
        // A device comes in with a winner it brings: a row refused takes its new device out
        // again (a later row of that device adds it), else it stays a device with no rows.
        const bool new_device = !store.find_device(row.device.id());
        if (new_device) store.add_device(row.device);
        WinnerOffer offer = offer_winner(store, row.entry, "imported from " + source, summary, kernel_problem);
        if (offer.outcome == WinnerOffer::Outcome::Refused) {
            offer.reason += " (" + source + ":" + std::to_string(row.line) + ")";
            if (new_device) store.remove_device(row.device.id());
        } else if (new_device) {
            ++summary.devices_added;
        }
        summary.winners.push_back(std::move(offer));
    }
    // A file whose every winner is refused changes nothing: its devices would stay as rows
    // without a winner or a measurement.
    if (summary.all_refused()) {
        summary.devices_added = summary.binaries_added = 0;
        return summary;  // the transaction rolls back
    }
    transaction.commit();
    return summary;
}

}  // namespace sgemm
