#include "src/jit/embedded_templates.h"

#include "src/util/error.h"

namespace sgemm {

std::string template_text(const std::string& name) {
    for (const EmbeddedFile& f : embedded_templates())
        if (name == f.name) return f.text;
    throw Error("no embedded template named '" + name + "'");
}

}  // namespace sgemm
