#include "db/prune.h"

#include <algorithm>
#include <filesystem>

#include "db/version_numbers.h"

namespace sgemm {

namespace {

// compact_after_prune rewrites the file when at least one page in this many is free.
constexpr std::int64_t kCompactShare = 4;

// Removes the devices (their rows go with them: the schema cascades), counting each kind. A
// device whose row was deleted by hand (sqlite3 enforces no foreign key by default) leaves
// rows no cascade reaches: they are removed by its id.
void remove_devices(TuningStore& store, const std::vector<std::string>& device_ids, PruneSummary& summary) {
    sqlite::Connection& db = store.connection();
    for (const std::string& id : device_ids) {
        const auto count = [&](const char* sql) {
            auto q = db.query(sql);
            q.bind(1, id);
            q.step();
            return static_cast<int>(q.integer(0));
        };
        summary.winners += count("SELECT count(*) FROM winners WHERE device_id = ?1");
        summary.measurements += count("SELECT count(*) FROM measurements WHERE device_id = ?1");
        summary.misses += count("SELECT count(*) FROM (SELECT DISTINCT m, n, k, trans_a, trans_b, precision, alignment "
                                "FROM misses WHERE device_id = ?1)");
        store.remove_device(id);
        summary.devices += db.changes();
        for (const char* table : {"winners", "measurements", "misses"})
            db.query(std::string("DELETE FROM ") + table + " WHERE device_id = ?1").bind(1, id).run();
    }
}

}  // namespace

bool superseded(const std::string& version, const std::string& current) {
    return !is_build_version(version) || version_numbers(version) < version_numbers(current);
}

PruneSummary prune_devices(TuningStore& store, const std::vector<std::string>& device_ids) {
    PruneSummary summary;
    sqlite::Transaction transaction(store.connection());
    remove_devices(store, device_ids, summary);
    transaction.commit();
    return summary;
}

PruneSummary prune_stale(TuningStore& store, const std::vector<std::string>& sources_hashes,
                         const std::string& library_version) {
    PruneSummary summary;
    sqlite::Connection& db = store.connection();
    sqlite::Transaction transaction(db);
    // By the ids stored: a row edited by hand is not under the id its fields give.
    std::vector<std::string> stale;
    for (const TuningStore::DeviceRow& row : store.device_rows()) {
        if (superseded(row.fields.library_version, library_version))
            stale.push_back(row.stored_id);
        else if (row.fields.library_version != library_version)
            ++summary.newer_kept;
    }
    remove_devices(store, stale, summary);
    std::string current;  // ?1, ?2, ...: this build's hashes
    for (std::size_t i = 1; i <= sources_hashes.size(); ++i) current += (i > 1 ? ", ?" : "?") + std::to_string(i);
    auto remove_binaries = db.query(
        "DELETE FROM binaries WHERE cache_key NOT IN (SELECT binary_key FROM winners WHERE binary_key IS NOT NULL) "
        "AND (nvrtc_version NOT IN (SELECT nvrtc_version FROM devices) OR kernel_id IN "
        "(SELECT id FROM kernels WHERE template_hash NOT IN (" + current + ") AND template_hash NOT IN "
        "(SELECT k.template_hash FROM kernels k JOIN winners w ON w.kernel_id = k.id UNION "
        "SELECT k.template_hash FROM kernels k JOIN measurements m ON m.kernel_id = k.id)))");
    for (std::size_t i = 0; i < sources_hashes.size(); ++i)
        remove_binaries.bind(static_cast<int>(i + 1), sources_hashes[i]);
    remove_binaries.run();
    summary.binaries = db.changes();
    // The cuBLAS row stands for no kernel of ours (stats does not count it): it stays, so that
    // what prune removes is what it reports, and a prune that found nothing else changed
    // nothing.
    const std::string unused_kernels = "FROM kernels WHERE id NOT IN (SELECT kernel_id FROM winners) AND id NOT IN "
                                       "(SELECT kernel_id FROM measurements) AND id NOT IN (SELECT kernel_id FROM binaries) "
                                       "AND family <> 'cublas'";
    db.query("DELETE " + unused_kernels).run();
    summary.kernels = db.changes();
    transaction.commit();
    return summary;
}

std::int64_t bytes_on_disk(const TuningStore& store) {
    std::error_code ec;
    std::int64_t bytes = 0;
    for (const std::string& file : {store.path(), store.path() + "-wal"}) {
        const auto size = std::filesystem::file_size(file, ec);
        if (!ec) bytes += static_cast<std::int64_t>(size);
    }
    return bytes;
}

void compact_after_prune(TuningStore& store, std::int64_t bytes_before_prune, PruneSummary& summary) {
    sqlite::Connection& db = store.connection();
    // A full rewrite holds the write lock while it runs (seconds for a GB), which a tune or
    // dispatch writing misses waits out only up to its busy timeout: not for a few free pages.
    if (db.integer("PRAGMA freelist_count") * kCompactShare < db.integer("PRAGMA page_count")) return;
    try {
        db.exec("VACUUM");
        // In WAL mode the rewritten pages sit in the -wal file until a checkpoint copies them
        // back: TRUNCATE does, and empties the -wal file, where no other connection reads an
        // older snapshot.
        auto checkpoint = db.query("PRAGMA wal_checkpoint(TRUNCATE)");
        if (checkpoint.step() && checkpoint.integer(0) != 0)
            summary.compact_problem = "other connections hold the database open, so its -wal file keeps the "
                                      "rewritten pages until they close";
    } catch (const DbError& e) {
        summary.compact_problem = e.what();
    }
    // Beside a reader the -wal file grows by the rewritten pages, which a checkpoint gives back
    // once it closes: nothing freed yet, where "freed" read as a negative count.
    summary.bytes_freed = std::max<std::int64_t>(0, bytes_before_prune - bytes_on_disk(store));
}

}  // namespace sgemm
