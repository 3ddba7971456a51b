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

#include "db/merge.h"
#include "db/store.h"

namespace sgemm {

enum class ExchangeFormat { csv, json };

// "csv" or "json"; anything else is an Error naming the choices.
ExchangeFormat parse_exchange_format(const std::string& text);

// The column names, in the order export writes them.
std::vector<std::string> exchange_columns();

// Writes the winners of `device_id` (of every device when empty).
void export_winners(TuningStore& store, std::ostream& out, ExchangeFormat format, const std::string& device_id = {});

// A bad import file; the message names every bad line.
struct ImportError : Error {
    using Error::Error;
};

// Reads a CSV that export_winners wrote. Every row is checked before anything is written:
// one bad row makes an ImportError that lists each bad line ("SOURCE:LINE: problem") and
// leaves the store untouched. Then, in one transaction, the rows' devices are added and
// their winners offered under the merge rule (db/merge.h).
MergeSummary import_winners(TuningStore& store, std::istream& in, const std::string& source);

}  // namespace sgemm
