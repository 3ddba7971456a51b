#include "src/jit/embedded_templates.h"

#include "src/util/error.h"

namespace sgemm {

std::string template_text(const std::string& name) {
    if (const char* text = find_embedded(embedded_templates(), name)) return text;
    throw Error("no embedded template named '" + name + "'");
}

}  // namespace sgemm
