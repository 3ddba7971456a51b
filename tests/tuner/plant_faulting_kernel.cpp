// For tune_cli.sh: plant_faulting_kernel DB puts a kernel that traps into the database DB as
// the binary of naive's default configuration for this GPU (faulting_kernel.h).
#include <cstdio>
#include <exception>

#include "src/cuda/device.h"
#include "tests/tuner/faulting_kernel.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: plant_faulting_kernel DATABASE\n");
        return 1;
    }
    try {
        sgemm::testing::plant_a_kernel_that_faults(argv[1], sgemm::Arch{sgemm::use_device(0).sm()},
                                                   sgemm::testing::FaultsOn::first_run, 0);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "plant_faulting_kernel: %s\n", e.what());
        return 2;
    }
    return 0;
}
