// A candidate that faults the GPU, for the tests of what a tune does then: none of the
// families' kernels does, so one is planted in a database's binary cache.
#pragma once
#include <string>
#include <vector>

#include "db/records.h"
#include "src/jit/arch.h"

namespace sgemm::testing {

// When the planted kernel faults:
//   first_run         it traps at once, so a tune's check of the candidate faults;
//   after_the_check   its first `checked_runs` runs compute the product as naive does,
//                     which passes the check of a shape of that many runs (checked_runs in
//                     tuner/candidate_check.h), and every run after traps: the fault comes
//                     while the candidate is timed.
//   once_released     its runs compute the product as naive does until the int at
//                     `release_flag` (mapped host memory, as the device addresses it) is not
//                     0, and trap after: the test lets the fault come when it chooses.
enum class FaultsOn { first_run, after_the_check, once_released };

// Puts into the database at `path`, as the binary of naive's configuration `values` (empty:
// its defaults) for `arch`, a kernel that traps on the run `when` says; a tune takes it from
// the cache as that candidate's build; `checked_runs` counts only after_the_check, and
// `release_flag` only once_released, whose binary holds its address and so serves only the
// process that mapped it. Returns the candidate's kernel.
KernelRef plant_a_kernel_that_faults(const std::string& path, Arch arch, FaultsOn when, int checked_runs,
                                     std::vector<int> values = {}, const int* release_flag = nullptr);

}  // namespace sgemm::testing
