// For tune_cli.sh: plant_misses DB COUNT [VERSION] records in the database DB, for this GPU
// (device 0), COUNT misses of shapes too large for any GPU's memory to tune (M from 100001
// up, N = K = 100000) and one that fits (8 x 64 x 64): what sgemm-tune --from-misses names
// and leaves out, and what it tunes. With VERSION, under this GPU as sgemm VERSION saw it:
// the misses an engine recorded before an upgrade.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "db/store.h"
#include "src/cuda/device.h"
#include "src/records/kernel_records.h"

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) {
        std::fprintf(stderr, "usage: plant_misses DATABASE COUNT [VERSION]\n");
        return 1;
    }
    try {
        const int count = std::stoi(argv[2]);
        sgemm::TuningStore store(argv[1]);
        sgemm::DeviceFingerprint gpu = sgemm::fingerprint_of(sgemm::use_device(0));
        if (argc == 4) gpu.library_version = argv[3];
        const std::string id = store.add_device(gpu);
        const auto key = [](int M, int N, int K) {
            sgemm::ShapeKey shape;
            shape.M = M, shape.N = N, shape.K = K;
            return shape;
        };
        // Counts that fall with M, so that the misses come out in this order, the one that fits last.
        std::vector<sgemm::Miss> misses = {sgemm::Miss{id, key(8, 64, 64), 1, "", "", ""}};
        for (int i = 0; i < count; ++i) misses.push_back(sgemm::Miss{id, key(100001 + i, 100000, 100000), 2 + count - i, "", "", ""});
        store.record_misses(misses, "plant_misses");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "plant_misses: %s\n", e.what());
        return 2;
    }
    return 0;
}
