// The kernel template sources, compiled into the library (see src/util/embed_files.py).
#pragma once
#include <string>
#include <vector>

#include "src/util/embedded_file.h"

namespace sgemm {

// Each named as in templates/, which is also the name it is #included by.
const std::vector<EmbeddedFile>& embedded_templates();

// The text of templates/<name>; throws sgemm::Error for an unknown name.
std::string template_text(const std::string& name);

}  // namespace sgemm
