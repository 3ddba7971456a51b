// `sgemm-db prune`: removing what will never be used again.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "db/store.h"

namespace sgemm {

struct PruneSummary {
    // Rows removed; misses as shape keys (their rows are one per recorder), as stats counts them.
    int devices = 0, winners = 0, measurements = 0, misses = 0, binaries = 0, kernels = 0;
    // prune_stale: devices of newer library versions, or of this one with a suffix
    // ("0.3.0-dev" beside 0.3.0), left as they are.
    int newer_kept = 0;
    // compact_after_prune: the bytes the file and its -wal file shrank by on disk, and why
    // they did not, where they did not.
    std::int64_t bytes_freed = 0;
    std::string compact_problem;
    bool changed_nothing() const {
        return devices == 0 && winners == 0 && measurements == 0 && misses == 0 && binaries == 0 && kernels == 0;
    }
};

// Removes the devices and every row of theirs (winners, measurements, misses).
PruneSummary prune_devices(TuningStore& store, const std::vector<std::string>& device_ids);

// Whether rows of `version` are of no build from `current` on: an older version, or text no
// build writes (a hand edit such as "0.3", whose numbers would otherwise rank it against
// "0.3.0" by their count). A newer version is another build's, which may share the file.
bool superseded(const std::string& version, const std::string& current);

// Removes what no build of `library_version` or newer can use: the devices of older library
// versions (their fingerprints never match again; a version that no build writes, not three
// numbers as is_build_version takes them, counts as older) with their rows, then the
// binaries that no winner uses and whose cache keys are never computed again: of an NVRTC
// version no remaining device has, or of kernel sources (their hash) neither this build's
// (`sources_hashes`, one per family) nor any of a remaining device's winners or
// measurements; then the kernels nothing refers to. Versions
// compare by their dotted numbers, before any "-" or "+" suffix. Devices of newer versions
// (or of this one with a suffix: "0.4.0-dev" or "0.3.0-dev" beside 0.3.0) belong to a
// newer build that may share the file: they stay, counted in newer_kept, and so do the
// binaries of the sources their tuning measured.
PruneSummary prune_stale(TuningStore& store, const std::vector<std::string>& sources_hashes,
                         const std::string& library_version = SGEMM_VERSION);

// Gives the pages that rows removed left free back to the filesystem (VACUUM), where they are
// a quarter of the file or more: SQLite keeps them for its own reuse, so a prune of hundreds of
// MB of binaries would otherwise leave the file as large. The rewrite holds the write lock
// while it runs and needs free disk space of twice the database's size (a copy in the
// temporary folder, and the rewritten pages in the -wal file). Where it fails, or other
// connections keep the -wal file from being emptied, the prune stays and `compact_problem`
// says why. `bytes_freed` is the change on disk of the file and its -wal file since
// `bytes_before_prune` (bytes_on_disk before the prune: the prune's deletions grow the -wal
// file, and measured after them the shrink was overstated), or 0 where they grew (the
// rewritten pages waiting in the -wal file beside a reader).
void compact_after_prune(TuningStore& store, std::int64_t bytes_before_prune, PruneSummary& summary);

// The bytes of the database's file and its -wal file on disk.
std::int64_t bytes_on_disk(const TuningStore& store);

}  // namespace sgemm
