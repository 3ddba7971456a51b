#include "db/merge.h"

#include <filesystem>

#include "db/exchange.h"
#include "db/verify.h"
#include "src/util/text.h"
#include "src/util/utf8.h"

namespace sgemm {

namespace {

std::string invalid_reason(const WinnerWithBinary& wb, const DeviceFingerprint& device,
                           const KernelProblem& kernel_problem) {
    const Winner& w = wb.winner;
    if (std::string problem = winner_time_problem(w, &device); !problem.empty()) return problem;
    if (!w.kernel.is_cublas()) {
        if (!wb.binary) return "its binary is missing";
        if (std::string problem = binary_problem(*wb.binary, device); !problem.empty()) return problem;
    }
    if (std::string problem = kernel_problem ? kernel_problem(w, device) : ""; !problem.empty()) return problem;
    // A value no tune writes (edited by hand, or brought by an import of an older build),
    // which import refuses: merged, it would make the file's export leave the winner out.
    if (std::string problem = exported_row_problem(device, wb); !problem.empty())
        return "it holds a value that import refuses: " + problem;
    return "";
}

// Stores `binary` (TuningStore::put_binary), counting what that changed.
void put_binary(TuningStore& store, const Binary& binary, MergeSummary& summary) {
    bool took_checksum = false;
    if (store.put_binary(binary, &took_checksum)) ++summary.binaries_added;
    if (took_checksum) ++summary.checksums_taken;
}

}  // namespace

int MergeSummary::count(WinnerOffer::Outcome outcome) const {
    int n = 0;
    for (const WinnerOffer& offer : winners) n += offer.outcome == outcome;
    return n;
}

bool MergeSummary::all_refused() const {
    return !winners.empty() && count(WinnerOffer::Outcome::Refused) == static_cast<int>(winners.size());
}

bool MergeSummary::changed_nothing() const {
    return devices_added == 0 && binaries_added == 0 && measurements_added == 0 && misses_merged == 0 &&
           checksums_taken == 0 &&
           count(WinnerOffer::Outcome::Added) == 0 && count(WinnerOffer::Outcome::Replaced) == 0;
}

WinnerOffer offer_winner(TuningStore& store, const WinnerWithBinary& incoming, const std::string& came_by,
                         MergeSummary& summary, const KernelProblem& kernel_problem) {
    WinnerOffer offer;
    offer.incoming = incoming.winner;
    offer.previous = store.find_winner(incoming.winner.device_id, incoming.winner.shape);
    const std::optional<DeviceFingerprint> device = store.find_device(incoming.winner.device_id);
    if (device) offer.library_version = device->library_version;
    offer.reason = device ? invalid_reason(incoming, *device, kernel_problem) : "its device is not in the database";
    if (offer.reason.empty()) offer.reason = stored_binary_problem(store, incoming.winner);
    if (!offer.reason.empty()) {
        offer.outcome = WinnerOffer::Outcome::Refused;
        return offer;
    }
    if (offer.previous && offer.previous->ms <= incoming.winner.ms) {
        offer.outcome = WinnerOffer::Outcome::Kept;
        // The kept winner's own binary, come again: a stored copy without a checksum takes
        // the one it brings (put_binary), and a damaged one gives way to it.
        if (incoming.binary && incoming.winner.binary_key == offer.previous->binary_key)
            put_binary(store, *incoming.binary, summary);
        return offer;
    }
    offer.outcome = offer.previous ? WinnerOffer::Outcome::Replaced : WinnerOffer::Outcome::Added;
    offer.incoming.provenance += "; " + as_utf8(came_by);  // the database's text is UTF-8
    if (incoming.binary) put_binary(store, *incoming.binary, summary);
    store.put_winner(offer.incoming);
    return offer;
}

MergeSummary merge_store(TuningStore& store, TuningStore& other, const KernelProblem& kernel_problem) {
    std::error_code ec;
    if (std::filesystem::equivalent(store.path(), other.path(), ec))
        throw Error("cannot merge " + printable(other.path()) + " into itself");
    // Its rows would be found by no lookup here either, and its measurements and misses would
    // name a device that is not there: refused before anything changes.
    if (const std::vector<TuningStore::EditedDeviceRow> edited = other.edited_device_rows(); !edited.empty())
        throw DbError(printable(other.path()) + ": " + printable(edited_device_problem(edited.front())) +
                      "; nothing was merged (sgemm-db verify names every such row)");
    // Its measurements and misses would be copied naming a row that is not here, which this
    // file's foreign keys refuse, and its winners without their row would be offered by none.
    if (const std::int64_t dangling = other.dangling_rows(); dangling > 0)
        throw DbError(printable(other.path()) + ": " + std::to_string(dangling) +
                      " rows name a device or kernel row that is missing (deleted by hand?); nothing was merged "
                      "(sgemm-db verify names every such row)");
    MergeSummary summary;
    sqlite::Transaction transaction(store.connection());
    const std::vector<DeviceFingerprint> devices = other.devices();
    std::vector<std::string> added;  // each winner offered is judged against its device here
    for (const DeviceFingerprint& device : devices) {
        if (store.find_device(device.id())) continue;
        added.push_back(store.add_device(device));
        ++summary.devices_added;
    }
    for (const DeviceFingerprint& device : devices)
        for (const WinnerWithBinary& wb : other.winners_with_binaries(device.id()))
            summary.winners.push_back(offer_winner(store, wb, "merged from " + other.path(), summary, kernel_problem));
    for (const Measurement& m : other.measurements()) {
        if (store.has_measurement(m)) continue;
        store.record_measurement(m);
        ++summary.measurements_added;
    }
    // Each recorder's row keeps the larger count: a file merged again adds nothing.
    summary.misses_merged = store.merge_misses(other.misses_by_recorder());
    // A device comes in with what it brings, as in an import: one whose every winner was
    // refused, and that brought no measurement or miss, would stay a row without any, and
    // make explain ask which device is meant.
    for (const std::string& id : added)
        if (store.winners(id).empty() && store.measurements(id).empty() && store.misses(id).empty()) {
            store.remove_device(id);
            --summary.devices_added;
        }
    transaction.commit();
    return summary;
}

}  // namespace sgemm
