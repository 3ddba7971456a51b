// A candidate that faults the GPU, for the tests of what a tune does then: none of the
// families' kernels does, so one is planted in a database's binary cache.
#pragma once
#include <string>

#include "db/records.h"
#include "src/jit/arch.h"

namespace sgemm::testing {

// Puts into the database at `path`, as the binary of naive's default configuration for
// `arch`, a kernel that traps; a tune takes it from the cache as that candidate's build.
// Returns the candidate's kernel.
KernelRef plant_a_kernel_that_faults(const std::string& path, Arch arch);

}  // namespace sgemm::testing
