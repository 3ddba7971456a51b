// The families' host code, compiled into the library (see src/util/embed_files.py) to be
// hashed with their templates into every stored kernel (family_sources_hash in
// src/jit/compiler.h): how a family's parameters become a grid, shared memory and a
// workspace, and how its binary's kernels are launched.
#pragma once
#include <string>
#include <vector>

#include "src/util/embedded_file.h"

namespace sgemm {

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
