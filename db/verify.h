// `sgemm-db verify`: is the file sound, and can dispatch launch every winner in it?
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "db/store.h"

namespace sgemm {

// Why `binary` is damaged, or empty when it is sound: its cubin must match the checksum
// stored with it (where it has one), be a whole CUDA ELF whose header names the binary's
// arch, and it must name its kernel. A cubin cut short or overwritten in the file would
// otherwise reach the CUDA loader, which reads past its end or runs damaged code.
std::string cubin_problem(const Binary& binary);
// What verify, export and merge say of a device row whose id is not the one its fields give.
std::string edited_device_problem(const TuningStore::EditedDeviceRow& row);

// Why `binary` cannot serve a winner on `device`, or empty when it can: it is sound
// (cubin_problem), and its arch runs on the device (same major compute capability, minor not
// above the device's).
std::string binary_problem(const Binary& binary, const DeviceFingerprint& device);

// Why the binary stored under `winner`'s binary key is not of the winner's kernel family and
// sources, or empty where it is, where none is stored, or for cuBLAS. Configurations that differ
// only in their split count share one binary, filed under the first of them, so the parameters
// may differ. An import or a merge whose winner names another kernel's binary would keep that
// binary (put_binary keeps the stored one), and dispatch would launch it: they refuse such a
// winner, export leaves it out and verify reports it.
std::string stored_binary_problem(TuningStore& store, const Winner& winner);

// Why `winner`'s time or cuBLAS time cannot be one measured for its shape on `device` (not a
// positive number, under 0.1 us, faster than its SMs could compute, or slower than any GPU),
// or empty. A time edited or damaged in the file would win every later merge and import ("the
// faster winner stays"), so import and merge refuse such a winner, export leaves it out and
// verify reports it. `device` is nullptr where its fields are not the device's (a device row
// edited by hand): the SMs' bound is then left out.
std::string winner_time_problem(const Winner& winner, const DeviceFingerprint* device);

// Loads a binary on this machine's GPU; returns why it failed, or empty on success.
using TryLoad = std::function<std::string(const Binary& binary)>;

// Why a winner whose binary is sound (or a cuBLAS winner, which has none) still cannot serve
// dispatch on its `device`, or empty: its kernel is not one the build can launch (an unknown
// family, the wrong number of parameters), the binary it names is not its own instantiation,
// or its description is not its kernel's. These are the kernel families' business (src/), not
// the database's.
using KernelProblem = std::function<std::string(const Winner& winner, const DeviceFingerprint& device)>;

struct VerifyReport {
    // devices: the device rows; devices_without_row: the ids that rows name with no device
    // row (deleted by hand), which stats lists beside them. winners: every winner row, as
    // stats counts them; dangling_winners of them, whose device or kernel row is missing, are
    // named among the problems and not checked further.
    int devices = 0, devices_without_row = 0, winners = 0, dangling_winners = 0;
    int binaries_checked = 0;  // ELF headers read: one per winner with a binary, one per cached binary
    int binaries_loaded = 0;   // loaded on the GPU
    int edited_device_rows = 0;  // of the problems, device rows edited by hand (no re-tune repairs one)
    // Of the problems, rows that name a missing device or kernel row (deleted by hand; no
    // re-tune repairs one), as TuningStore::dangling_rows counts them.
    int dangling_rows = 0;
    // Of the problems, winners with a value no tune writes (exported_row_problem), and rows of
    // any table with a size past 2^31 - 1.
    int edited_values = 0;
    // Rows with such sizes stop the check before any binary or winner is checked, since the
    // store cannot read them: devices and winners are counted, not checked.
    bool stopped_at_sizes = false;
    std::vector<std::string> problems;
    bool ok() const { return problems.empty(); }
};

// Runs SQLite's integrity and foreign-key checks, checks that every cached binary no winner
// names is sound (cubin_problem), that each device's id matches its fingerprint, that every
// winner's times could have been measured (winner_time_problem), and that every winner that
// is not cuBLAS (an edited device row's too) has its binary, of its own
// kernel family and template, passing binary_problem (and `kernel_problem`, when given).
// A winner with none of these problems is then read back as an import would read its row
// (exported_row_problem), which finds values edited in by hand.
// With `try_load`, also loads every such binary whose arch is `gpu_sm` (the GPU this
// machine has).
VerifyReport verify_store(TuningStore& store, const TryLoad& try_load = {}, int gpu_sm = 0,
                          const KernelProblem& kernel_problem = {});

}  // namespace sgemm
