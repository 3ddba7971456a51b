// The five ladder families (naive, smem, blocktile, vec4, async), in ladder order.
#pragma once
#include <vector>

#include "src/families/family.h"

namespace sgemm {

std::vector<Family> ladder_families();

}  // namespace sgemm
