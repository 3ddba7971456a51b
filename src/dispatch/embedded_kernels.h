// libsgemm_dispatch's own kernel sources (not GEMM templates), compiled into the library (see
// src/util/embed_files.py).
#pragma once
#include <vector>

#include "src/util/embedded_file.h"

namespace sgemm {

// Each named as in templates/.
const std::vector<EmbeddedFile>& embedded_dispatch_kernels();

}  // namespace sgemm
