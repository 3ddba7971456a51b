// The kernel template sources, compiled into the library (see embed_templates.py).
#pragma once
#include <string>
#include <vector>

namespace sgemm {

struct EmbeddedFile {
    const char* name;  // file name in templates/, also the name it is #included by
    const char* text;
};

const std::vector<EmbeddedFile>& embedded_templates();

// The text of templates/<name>; throws sgemm::Error for an unknown name.
std::string template_text(const std::string& name);

}  // namespace sgemm
