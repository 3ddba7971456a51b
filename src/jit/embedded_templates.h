// The sources a stored kernel's hash covers, compiled into the library (see
// src/util/embed_files.py): the kernel templates, and the families' host code.
#pragma once
#include <string>
#include <vector>

#include "src/util/embedded_file.h"

namespace sgemm {

// Each named as in templates/, which is also the name it is #included by.
const std::vector<EmbeddedFile>& embedded_templates();

// The text of templates/<name>; throws sgemm::Error for an unknown name.
std::string template_text(const std::string& name);

// `root` and every file of `files` it includes by `#include "name"`, directly or through
// another, each once, in name order: the sources of a kernel built from `root`, and all
// that NVRTC is given to compile it (src/jit/compiler.cpp), so an include this scan misses,
// or of a name no file of `files` has, fails the compile rather than going unhashed. An
// include inside #if is counted all the same. Throws sgemm::Error when `root` is not among
// `files`.
std::vector<EmbeddedFile> template_and_includes(const std::string& root,
                                                const std::vector<EmbeddedFile>& files = embedded_templates());

// Hash of those files' names and text. A stored kernel, and a cached binary, is reused only
// by a build whose sources of its template hash alike, so editing one family's template
// leaves the other families' tuning in place.
std::string template_sources_hash(const std::string& root,
                                  const std::vector<EmbeddedFile>& files = embedded_templates());

// The host code of the kernel families (src/families: family.h, family.cpp and each file
// that declares families), each named by its base name.
const std::vector<EmbeddedFile>& embedded_family_sources();

// Hash of the host code of a family declared in `host_source` (Family::host_source): that
// file and family.h and family.cpp, which every family shares. Throws sgemm::Error when one
// of them is not among `files`.
std::string family_host_sources_hash(const std::string& host_source,
                                     const std::vector<EmbeddedFile>& files = embedded_family_sources());

}  // namespace sgemm
