#include "src/jit/family_host_sources.h"

#include "src/util/error.h"
#include "src/util/hash.h"

namespace sgemm {

std::string family_host_sources_hash(const std::string& host_source, const std::vector<EmbeddedFile>& declaring,
                                     const std::vector<EmbeddedFile>& shared) {
    const char* own = find_embedded(declaring, host_source);
    if (!own) throw Error("no embedded family source named '" + host_source + "' (src/meson.build's family_declaring_files)");
    Fnv1a64 h;
    h.add(host_source).add(own);
    for (const EmbeddedFile& f : shared) h.add(f.name).add(f.text);
    return h.hex();
}

}  // namespace sgemm
