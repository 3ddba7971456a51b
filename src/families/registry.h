// Every family the tuner may search and dispatch may launch.
#pragma once
#include <string>
#include <vector>

#include "src/families/family.h"

namespace sgemm {

// All families, the ladder first in ladder order, then the tuned families.
const std::vector<Family>& all_families();
// The family called `name`; throws sgemm::Error listing the known names.
const Family& find_family(const std::string& name);

}  // namespace sgemm
