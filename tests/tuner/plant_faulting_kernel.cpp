// For tune_cli.sh: plant_faulting_kernel DB [COUNT] puts a kernel that traps into the database
// DB as the binary of naive's default configuration for this GPU (faulting_kernel.h), and of
// as many more of its configurations as make COUNT (1 if not given): a run that meets many
// faults.
#include <cstdio>
#include <exception>
#include <string>

#include "src/cuda/device.h"
#include "src/families/registry.h"
#include "tests/tuner/faulting_kernel.h"

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: plant_faulting_kernel DATABASE [COUNT]\n");
        return 1;
    }
    try {
        const int count = argc == 3 ? std::stoi(argv[2]) : 1;
        const sgemm::Arch arch{sgemm::use_device(0).sm()};
        const sgemm::Family& naive = sgemm::find_family("naive");
        std::vector<std::vector<int>> configs = {naive.defaults};
        for (const auto& values : naive.valid_configs(arch))
            if (values != naive.defaults) configs.push_back(values);
        if (count < 1 || count > static_cast<int>(configs.size())) {
            std::fprintf(stderr, "plant_faulting_kernel: COUNT must be 1 to %zu\n", configs.size());
            return 1;
        }
        for (int i = 0; i < count; ++i)
            sgemm::testing::plant_a_kernel_that_faults(argv[1], arch, sgemm::testing::FaultsOn::first_run, 0, configs[i]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "plant_faulting_kernel: %s\n", e.what());
        return 2;
    }
    return 0;
}
