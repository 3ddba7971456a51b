#include "src/jit/embedded_templates.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "src/util/error.h"
#include "src/util/hash.h"

namespace sgemm {

namespace {

// The names in the `#include "name"` lines of `text` (a line whose first character other
// than blanks is '#'; so an include in a comment is not one).
std::vector<std::string> quoted_includes(const char* text) {
    std::vector<std::string> names;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::size_t at = line.find_first_not_of(" \t");
        if (at == std::string::npos || line[at] != '#') continue;
        at = line.find_first_not_of(" \t", at + 1);
        if (at == std::string::npos || line.compare(at, 7, "include") != 0) continue;
        const std::size_t open = line.find_first_not_of(" \t", at + 7);
        if (open == std::string::npos || line[open] != '"') continue;
        const std::size_t close = line.find('"', open + 1);
        if (close != std::string::npos) names.push_back(line.substr(open + 1, close - open - 1));
    }
    return names;
}

}  // namespace

std::vector<EmbeddedFile> template_and_includes(const std::string& root, const std::vector<EmbeddedFile>& files) {
    if (!find_embedded(files, root)) throw Error("no embedded template named '" + root + "'");
    std::set<std::string> found{root};
    std::vector<std::string> to_scan{root};
    while (!to_scan.empty()) {
        const std::string name = to_scan.back();
        to_scan.pop_back();
        for (const std::string& included : quoted_includes(find_embedded(files, name)))
            if (find_embedded(files, included) && found.insert(included).second) to_scan.push_back(included);
    }
    std::vector<EmbeddedFile> sources;
    for (const EmbeddedFile& f : files)
        if (found.count(f.name)) sources.push_back(f);
    std::sort(sources.begin(), sources.end(),
              [](const EmbeddedFile& a, const EmbeddedFile& b) { return std::strcmp(a.name, b.name) < 0; });
    return sources;
}

std::string template_sources_hash(const std::string& root, const std::vector<EmbeddedFile>& files) {
    Fnv1a64 h;
    for (const EmbeddedFile& f : template_and_includes(root, files)) h.add(f.name).add(f.text);
    return h.hex();
}

}  // namespace sgemm
