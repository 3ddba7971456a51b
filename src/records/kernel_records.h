// The bridge between the kernels (src/) and their rows in the tuning database (db/):
// fingerprints of devices, references to kernels, binaries in the cache, and whether a
// stored kernel can run a shape. The tuner, dispatch and sgemm-db all go through here.
#pragma once
#include <climits>
#include <string>
#include <vector>

#include "db/records.h"
#include "src/cuda/device.h"
#include "src/families/family.h"
#include "src/jit/compiler.h"

namespace sgemm {

// The fingerprint that scopes every result measured on `device` with this process's
// NVRTC and library.
DeviceFingerprint fingerprint_of(const DeviceInfo& device);

// family_sources_hash (src/jit/compiler.h) of every family of this build.
const std::vector<std::string>& all_family_sources_hashes();

KernelRef kernel_ref(const Family& family, const ParamValues& values);

// The registered family a stored kernel belongs to, or nullptr when this build has none.
const Family* family_of(const KernelRef& kernel);

// Whether `kernel` is of a family this build has, tuned with this build's sources of it.
bool built_from_these_sources(const KernelRef& kernel);

// Whether `kernel` adds split-K's slices into C with float atomics (Family::sums_with_atomics),
// so that its results vary from run to run in the last bits. False for cuBLAS and for a
// family this build does not have.
bool kernel_sums_with_atomics(const KernelRef& kernel);

// The largest M, N or K a kernel of this build takes: 2^31 - 4096. The kernels count whole
// tiles (and compare a tile's end with the size) in 32-bit ints, which wrap within a tile of
// 2^31: a K of 2^31 - 15 ran no k-tiles and left C as beta x C. The margin passes any tile,
// step or slice rounding of the families. It is checked here, not among a family's own
// checks, which are hashed with its templates: a change there makes every stored winner
// another build's, to be tuned again.
constexpr int kLargestKernelDimension = INT_MAX - 4095;

// Why no kernel of this build takes these sizes (one past kLargestKernelDimension), or "".
std::string size_past_kernels(int M, int N, int K);

// Why `kernel` cannot run `shape` on `arch` (unknown family, sizes past the kernels',
// alignment, transposes, grid or shared-memory limits), or empty when it can. cuBLAS runs
// everything.
std::string kernel_cannot_run(const KernelRef& kernel, const ShapeKey& shape, Arch arch);

// Why this build cannot launch `w`'s kernel on `arch` at all, or empty when it can: a
// family this build does not have, another build's sources of its family (templates or host
// code: family_sources_hash), or kernel_cannot_run for the winner's own shape. Not the
// families' search-space rules (value lists, speed rules, register estimates): a kernel
// measured correct stays launchable outside them, as an edited row may hold one. Dispatch
// leaves such winners out when it loads the database, and `sgemm-db explain` does the same.
std::string winner_unusable(const Winner& w, Arch arch);

// The cache key of `w`'s own binary on `device` (its arch, and the NVRTC of its row, which a
// database gathered from machines of other CUDA releases may hold), when this build can
// tell: its family is known and it was tuned with this build's sources of it; else empty.
std::string own_binary_key(const Winner& w, const DeviceFingerprint& device);

// Why `w`, whose sources hash (KernelRef::template_hash) is none of this build's, is still not
// another build's row, or empty: its binary key is the one this build's sources give its
// family and parameters on `device`, and the key hashes the sources, so its hash was edited.
// Taken for another build's, it would come in unjudged, and the binary it brings would be
// filed under that key as the edited kernel's, for the winners of this build that name it.
std::string edited_sources_hash(const Winner& w, const DeviceFingerprint& device);

// Why the binary stored under `w.binary_key` is not `w`'s own (on `device`), or empty when it
// is or this build cannot tell. Configurations share a binary only when they instantiate the
// template alike (split counts on the same side of 1); an edited, merged or imported
// database may pair a winner with another instantiation's binary, which would compute
// wrongly (a binary without split-K launched over several slices).
std::string binary_mismatch(const Winner& w, const DeviceFingerprint& device);

// Why `binary` does not load into the current CUDA context with every kernel it must hold
// (its main kernel, and the second kernel of a configuration that has one), or empty when
// it does. Needs a GPU; the cubin must be for the current device's arch.
std::string binary_load_failure(const Binary& binary);

Binary to_binary(const CompiledKernel& compiled, const KernelRef& kernel);
CompiledKernel from_binary(const Binary& binary);

}  // namespace sgemm
