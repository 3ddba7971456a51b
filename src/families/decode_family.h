// The decode family (templates/sgemm_decode.cuh): skinny GEMMs whose cost is reading B.
#pragma once
#include "src/families/family.h"

namespace sgemm {

Family decode_family();

}  // namespace sgemm
