#include "db/stats.h"

namespace sgemm {

StoreStats store_stats(TuningStore& store) {
    sqlite::Connection& db = store.connection();
    StoreStats s;
    s.file_bytes = db.integer("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()");
    s.kernels = db.integer("SELECT count(*) FROM kernels WHERE family <> 'cublas'");
    s.binaries = db.integer("SELECT count(*) FROM binaries");
    s.binary_bytes = db.integer("SELECT coalesce(sum(length(cubin)), 0) FROM binaries");
    s.binary_hits = db.integer("SELECT coalesce(sum(hits), 0) FROM binaries");
    const auto counted = [&db](std::string id, std::optional<DeviceFingerprint> device) {
        DeviceStats d;
        d.id = std::move(id);
        d.device = std::move(device);
        auto q = db.query(
            "SELECT (SELECT count(*) FROM winners WHERE device_id = ?1), "
            "(SELECT count(*) FROM winners w JOIN kernels k ON k.id = w.kernel_id "
            "WHERE w.device_id = ?1 AND k.family = 'cublas'), "
            "(SELECT count(*) FROM measurements WHERE device_id = ?1), "
            "(SELECT count(*) FROM measurements WHERE device_id = ?1 AND valid = 0), "
            "(SELECT count(*) FROM (SELECT DISTINCT m, n, k, trans_a, trans_b, precision, alignment FROM misses "
            "WHERE device_id = ?1)), "
            "(SELECT coalesce(sum(count), 0) FROM misses WHERE device_id = ?1)");
        q.bind(1, d.id);
        q.step();
        d.winners = q.integer(0);
        d.cublas_winners = q.integer(1);
        d.measurements = q.integer(2);
        d.invalid_measurements = q.integer(3);
        d.missed_shapes = q.integer(4);
        d.misses = q.integer(5);
        return d;
    };
    // By the id its rows name, even where the row was edited by hand.
    for (TuningStore::DeviceRow& row : store.device_rows()) s.devices.push_back(counted(row.stored_id, std::move(row.fields)));
    for (std::string& id : store.device_ids_without_row()) s.devices.push_back(counted(std::move(id), std::nullopt));
    return s;
}

}  // namespace sgemm
