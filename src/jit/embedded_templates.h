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

// Hash of those files' names and text: the templates' part of family_sources_hash
// (src/jit/compiler.h), so editing one family's template leaves the other families' tuning
// in place.
std::string template_sources_hash(const std::string& root,
                                  const std::vector<EmbeddedFile>& files = embedded_templates());

// The files of src/families that declare families (Family::host_source), each named by its
// base name.
const std::vector<EmbeddedFile>& embedded_family_sources();

// The host code every family's launch goes through: family.h and family.cpp (geometry,
// second kernels, workspaces) and src/jit/loaded_kernel (the order of a binary's kernels,
// the shared-memory opt-in, programmatic launches).
const std::vector<EmbeddedFile>& embedded_shared_launch_sources();

// Hash of the host code of a family declared in `host_source`: that file of `declaring`, and
// every file of `shared`. Throws sgemm::Error when `host_source` is not among `declaring`.
std::string family_host_sources_hash(const std::string& host_source,
                                     const std::vector<EmbeddedFile>& declaring = embedded_family_sources(),
                                     const std::vector<EmbeddedFile>& shared = embedded_shared_launch_sources());

}  // namespace sgemm
