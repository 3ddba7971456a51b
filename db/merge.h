// Bringing tuning results from elsewhere (another database, an import file) into a store.
//
// The rule: rows are keyed by device fingerprint, so another device's rows are added beside
// this one's and never mixed with them. For the same device and shape key, the faster valid
// winner stays, with its own provenance (an incoming one gets "; merged from SOURCE", or
// "; imported from SOURCE", appended). Valid means positive, finite times and, unless it is
// cuBLAS, a binary that passes binary_problem for the device, and (when the caller gives a
// KernelProblem, the kernel families' judgement) a kernel and binary this build would launch. Everything
// happens in one transaction: all or nothing.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"
#include "db/verify.h"

namespace sgemm {

struct WinnerOffer {
    enum class Outcome { Added, Replaced, Kept, Refused };
    Outcome outcome = Outcome::Added;
    Winner incoming;
    std::optional<Winner> previous;  // the stored winner it met, if any
    std::string reason;              // why Refused
    // Its device's sgemm version: a build's dispatch reads only the rows of its own.
    std::string library_version;
};

struct MergeSummary {
    // binaries_added: stored new, or over a damaged or unvouched row (TuningStore::put_binary).
    int devices_added = 0, binaries_added = 0, measurements_added = 0;
    int misses_merged = 0;  // miss rows (one per recorder and shape key) added or updated
    int checksums_taken = 0;  // binaries kept without a checksum that took the one of the same bytes
    std::vector<WinnerOffer> winners;  // one per incoming winner
    int count(WinnerOffer::Outcome outcome) const;
    // Winners were offered and every one was refused.
    bool all_refused() const;
    // No row was added or changed: every winner was kept or refused, or none came.
    bool changed_nothing() const;
};

// Offers one winner, with its binary, to its device in `store` (the device must be there),
// under the rule above. `came_by` says how it came, for its provenance: "merged from a.db",
// "imported from winners.csv". Joins the caller's transaction.
WinnerOffer offer_winner(TuningStore& store, const WinnerWithBinary& incoming, const std::string& came_by,
                         MergeSummary& summary, const KernelProblem& kernel_problem = {});

// Merges `other` into `store`: its devices that bring a row (a winner taken, a measurement or a
// miss), its winners (by the rule) with their binaries,
// its measurements not already present, and its miss counts (each recorder's row keeps the
// larger count: TuningStore::merge_misses).
// Throws Error for the same file, and DbError, before changing anything, where `other` has a
// device row edited by hand (TuningStore::edited_device_rows).
MergeSummary merge_store(TuningStore& store, TuningStore& other, const KernelProblem& kernel_problem = {});

}  // namespace sgemm
