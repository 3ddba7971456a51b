// The hot path's hash map: shape key -> prepared launch. Readers never lock: an
// open-addressing table of atomic pointers to plans that never change once published.
// Writers (the first call of a new shape key, create) take a mutex; the table doubles when
// half full and keeps the arrays it outgrew alive until it is destroyed, because a reader
// may still be probing one (they add up to less than the live array).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "db/shape_key.h"
#include "src/dispatch/catalog.h"
#include "src/jit/loaded_kernel.h"

namespace sgemm {

// How calls of one shape key are served.
struct Plan {
    ShapeKey key;
    Route route = Route::Refuse;
    bool exact = false;   // the key has an exact winner; other keys count as misses
    KernelLaunch launch;  // for Route::Kernel and Route::Builtin
    // Calls of this key not yet written to the database's misses table (when recorded).
    mutable std::atomic<std::int64_t> unwritten_misses{0};
};

class PlanTable {
public:
    PlanTable();

    // The plan of `key`, or nullptr. Lock-free.
    const Plan* find(const ShapeKey& key) const noexcept;
    // Adds `plan` unless its key has one already; returns the plan the table holds for it.
    const Plan* insert(std::unique_ptr<Plan> plan);
    // Every plan, in the order they came.
    std::vector<const Plan*> plans() const;
    int size() const;

private:
    struct Slots {
        explicit Slots(std::size_t count);
        std::size_t mask;
        std::unique_ptr<std::atomic<const Plan*>[]> at;
    };
    static void place(Slots& slots, const Plan* plan);  // under mutex_

    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Plan>> plans_;
    std::vector<std::unique_ptr<Slots>> generations_;  // every array published so far
    std::atomic<const Slots*> current_;
};

}  // namespace sgemm
