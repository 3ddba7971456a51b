// The migration files of db/migrations/, compiled into the library by
// src/util/embed_files.py, in version order.
#pragma once
#include "src/util/embedded_file.h"

namespace sgemm {

const std::vector<EmbeddedFile>& embedded_migrations();

}  // namespace sgemm
