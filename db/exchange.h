// Export and import of winners, for sharing them as text: CSV for people and spreadsheets,
// JSON for programs. A row holds everything needed to rebuild its winner elsewhere: the
// device's fingerprint, the shape key, the kernel, the times and provenance, and the
// binary (the cubin in base64), so an export imported into an empty file dispatches the
// same kernels. Import reads the CSV form.
#pragma once
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "db/csv.h"
#include "db/merge.h"
#include "db/store.h"

namespace sgemm {

enum class ExchangeFormat { csv, json };

// "csv" or "json"; anything else is an Error naming the choices.
ExchangeFormat parse_exchange_format(const std::string& text);

// The column names, in the order export writes them.
std::vector<std::string> exchange_columns();

// What export_winners wrote, and the winners it left out, each with why.
struct ExportSummary {
    int exported = 0;
    std::vector<std::string> left_out;
    std::size_t csv_bytes = 0;  // what a CSV export wrote: past kMaxCsvBytes, import cannot read it
};

// For an export of `summary`: where its CSV is more than import reads (kMaxCsvBytes; each row
// carries its cubin, so a few thousand winners of large kernels reach it), what to do instead,
// in words; else "".
std::string too_large_to_import(const ExportSummary& summary);

// Writes the winners of `device_id` (of every device when empty) and returns how many, and
// the winners it left out, each with why: one whose binary is missing or damaged (binary_problem, which
// verify reports too) would make import refuse the whole file, and would not run anywhere, as
// would one whose row import refuses (exported_row_problem);
// the winners of a device row edited by hand (TuningStore::edited_device_rows), one entry a
// row, would go unseen. `kernel_problem`, when given, is import's judgement of a winner's
// kernel (a parameter list of the wrong length, say): such a winner is left out too.
ExportSummary export_winners(TuningStore& store, std::ostream& out, ExchangeFormat format,
                             const std::string& device_id = {}, const KernelProblem& kernel_problem = {});

// What an import would refuse of the row export writes for `entry` of `device`, its fields
// read back as import reads them (a value no tune writes, edited in by hand or brought by an
// import of an older build: a time of tuning in another form, a negative tolerance, a number
// past a double's range, a NUL byte), or "". Export leaves such a winner out, verify reports
// it, and merge refuses it.
std::string exported_row_problem(const DeviceFingerprint& device, const WinnerWithBinary& entry);

// A bad import file; the message names every bad line.
struct ImportError : Error {
    using Error::Error;
};

// One row of an export: a device and one of its winners, with the winner's binary.
struct ExportRow {
    DeviceFingerprint device;
    WinnerWithBinary entry;
    int line = 0;  // where read_export found it, for messages
};

// Reads and checks every row of a CSV that export_winners wrote, before any store is
// touched (or created): one bad row makes an ImportError that lists each bad line
// ("SOURCE:LINE: problem"). A file past `max_bytes` (less than kMaxCsvBytes in a test) is
// refused, with what to do instead.
std::vector<ExportRow> read_export(std::istream& in, const std::string& source, std::size_t max_bytes = kMaxCsvBytes);

// In one transaction, adds the rows' devices to `store` and offers their winners under the
// merge rule (db/merge.h, with `kernel_problem`); `source` names the file in their provenance
// ("imported from SOURCE").
// Where every winner is refused, nothing is written, not even the devices (when this call
// began the transaction, not a caller's).
MergeSummary import_winners(TuningStore& store, const std::vector<ExportRow>& rows, const std::string& source,
                            const KernelProblem& kernel_problem = {});

}  // namespace sgemm
