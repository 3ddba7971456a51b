// The kernel template sources, compiled into the library (see src/util/embed_files.py).
#pragma once
#include <string>
#include <vector>

#include "src/util/embedded_file.h"

namespace sgemm {

// Each named as in templates/, which is also the name it is #included by.
const std::vector<EmbeddedFile>& embedded_templates();

// `root` and every file of `files` it includes by `#include "name"`, directly or through
// another, each once, in name order: the sources of a kernel built from `root`, and all
// that NVRTC is given to compile it (src/jit/compiler.cpp), so an include this scan misses,
// or of a name no file of `files` has, fails the compile rather than going unhashed. An
// include inside #if is counted all the same. Throws sgemm::Error when `root` is not among
// `files`.
std::vector<EmbeddedFile> template_and_includes(const std::string& root,
                                                const std::vector<EmbeddedFile>& files = embedded_templates());

// Hash of those files' names and text: the templates' part of family_sources_hash
// (src/jit/compiler.h), so editing one family's template leaves the other families' tuning
// in place.
std::string template_sources_hash(const std::string& root,
                                  const std::vector<EmbeddedFile>& files = embedded_templates());

}  // namespace sgemm
