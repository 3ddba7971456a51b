// Writes a tuning database for the sgemm-db command-line test (sgemm_db_cli.sh).
//
// usage: make_sample_db PATH ours|theirs|old|split|atomic|stale|upgraded [VERSION]
//   ours    the fixture's sample: one H200 with 4 winners (3 naive, 1 cuBLAS),
//           measurements and 2 misses (fill_sample)
//   theirs  to merge into ours: the same H200 with a faster winner at M=1, a slower one at
//           M=8, and another device (a newer driver) with a winner at M=2
//   old     an empty database at schema version 1, to upgrade
//   split   one H200 with one winner: decode in 4 slices at 8 x 1024 x 4096 (split-K, with its
//           binary), for explain's re-split
//   atomic  one H200 with one winner: warptile in 4 slices added into C by atomics at
//           32 x 4096 x 4096 (with its binary), for explain --deterministic
//   stale   one H200 as sgemm 0.2.0 (or VERSION, a newer build's) stamped it, with a cuBLAS
//           winner at 8 x 4096 x 4096: rows that this build's dispatch never reads
//   upgraded misses of an H200 under an earlier build (sgemm 0.0.1) and under this one, with
//            winners of this build, of an earlier driver and of another GPU, for "winner since"
#include <cstdio>
#include <string>

#include "db/schema.h"
#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "src/records/kernel_records.h"
#include "templates/sgemm_common.cuh"
#include "tests/db/fixture.h"

using namespace sgemm;
using namespace sgemm::testing;

int main(int argc, char** argv) {
    if (argc != 3 && !(argc == 4 && std::string(argv[2]) == "stale")) {
        std::fprintf(stderr, "usage: make_sample_db PATH ours|theirs|old|split|atomic|stale|upgraded [VERSION]\n");
        return 1;
    }
    const std::string path = argv[1], kind = argv[2];
    try {
        if (kind == "old") {
            sqlite::Connection db(path, sqlite::Access::ReadWrite, TuningStore::kDefaultBusyTimeout);
            migrate(db, 1);
            return 0;
        }
        TuningStore store(path);
        if (kind == "ours") {
            fill_sample(store);
            return 0;
        }
        if (kind == "split") {
            const Family& decode = find_family("decode");
            const ParamValues four_slices = {8, 128, 8, 4, 1, 0, 4, 0, 0};  // MT BN KW UNROLL EF TB SPLITS RING SUM_PASS
            const Binary b = to_binary(compile_kernel(decode, four_slices, Arch{90}), kernel_ref(decode, four_slices));
            store.put_binary(b);
            store.put_winner(winner(store.add_device(h200()), shape(8, 1024, 4096), 0.01, &b));
            return 0;
        }
        if (kind == "atomic") {
            const Family& warptile = find_family("warptile");
            ParamValues v = warptile.defaults;
            v[warptile.param_index("SPLITS")] = 4;
            v[warptile.param_index("SUM_PASS")] = SGEMM_SUM_BY_ATOMICS;
            const Binary b = to_binary(compile_kernel(warptile, v, Arch{90}), kernel_ref(warptile, v));
            store.put_binary(b);
            store.put_winner(winner(store.add_device(h200()), shape(32, 4096, 4096), 0.04, &b));
            return 0;
        }
        if (kind == "stale") {
            DeviceFingerprint older = h200();
            older.library_version = argc == 4 ? argv[3] : "0.2.0";
            store.put_winner(winner(store.add_device(older), shape(8, 4096, 4096), 1.0, nullptr));
            return 0;
        }
        if (kind == "upgraded") {
            // Misses an earlier build (sgemm 0.0.1) of the H200 recorded, and this build's: one of
            // the earlier misses has this build's winner since, the other only another GPU's; this
            // build's miss has a winner only under an earlier driver (13.0; this build is 13.1).
            DeviceFingerprint older = h200(1);
            older.library_version = "0.0.1";
            const std::string older_id = store.add_device(older);
            const std::string this_build = store.add_device(h200(1));
            store.record_misses({Miss{older_id, shape(8, 4096, 4096), 3, "", "", ""},
                                 Miss{older_id, shape(16, 4096, 4096), 2, "", "", ""},
                                 Miss{this_build, shape(1, 4096, 4096), 1, "", "", ""}},
                                "engine");
            store.put_winner(winner(this_build, shape(8, 4096, 4096), 1.0, nullptr));
            store.put_winner(winner(store.add_device(h200()), shape(1, 4096, 4096), 1.0, nullptr));
            DeviceFingerprint h100 = h200(1);
            h100.gpu_name = "NVIDIA H100 80GB HBM3";
            store.put_winner(winner(store.add_device(h100), shape(16, 4096, 4096), 1.0, nullptr));
            return 0;
        }
        if (kind != "theirs") throw Error("unknown kind '" + kind + "'");
        const Binary b = naive_binary();
        store.put_binary(b);
        const std::string id = store.add_device(h200());
        Winner faster = winner(id, shape(1, 4096, 4096), 0.04, &b);
        faster.provenance = "sgemm-tune on the other box";
        store.put_winner(faster);
        store.put_winner(winner(id, shape(8, 4096, 4096), 0.9, &b));
        const std::string other = store.add_device(h200(1));
        store.put_winner(winner(other, shape(2, 4096, 4096), 0.03, &b));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_sample_db: %s\n", e.what());
        return 2;
    }
}
