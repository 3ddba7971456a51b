// The list of every family the tuner may search and dispatch may launch.
#include "src/families/registry.h"

#include "src/families/decode_family.h"
#include "src/families/ladder_families.h"
#include "src/families/warptile_family.h"
#include "src/util/error.h"
#include "src/util/text.h"

namespace sgemm {

const std::vector<Family>& all_families() {
    static const std::vector<Family> families = [] {
        std::vector<Family> all = ladder_families();
        all.push_back(decode_family());
        all.push_back(warptile_family());
        return all;
    }();
    return families;
}

const Family& find_family(const std::string& name) {
    std::string known;
    for (const Family& f : all_families()) {
        if (f.name == name) return f;
        known += (known.empty() ? "" : ", ") + f.name;
    }
    throw Error("unknown kernel family " + single_quoted(name) + "; known families: " + known);
}

}  // namespace sgemm
