#include "src/dispatch/plan_table.h"

namespace sgemm {

PlanTable::Slots::Slots(std::size_t count) : mask(count - 1), at(new std::atomic<const Plan*>[count]) {
    for (std::size_t i = 0; i < count; ++i) at[i].store(nullptr, std::memory_order_relaxed);
}

PlanTable::PlanTable() {
    generations_.push_back(std::make_unique<Slots>(256));
    current_.store(generations_.back().get(), std::memory_order_release);
}

const Plan* PlanTable::find(const ShapeKey& key) const noexcept {
    const Slots* slots = current_.load(std::memory_order_acquire);
    // At most half full, so the probe meets an empty slot.
    for (std::size_t i = ShapeKeyHash()(key) & slots->mask;; i = (i + 1) & slots->mask) {
        const Plan* plan = slots->at[i].load(std::memory_order_acquire);
        if (!plan || plan->key == key) return plan;
    }
}

void PlanTable::place(Slots& slots, const Plan* plan) {
    std::size_t i = ShapeKeyHash()(plan->key) & slots.mask;
    while (slots.at[i].load(std::memory_order_relaxed)) i = (i + 1) & slots.mask;
    slots.at[i].store(plan, std::memory_order_release);
}

const Plan* PlanTable::insert(std::unique_ptr<Plan> plan) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const Plan* existing = find(plan->key)) return existing;
    if ((plans_.size() + 1) * 2 > generations_.back()->mask + 1) {
        auto bigger = std::make_unique<Slots>(2 * (generations_.back()->mask + 1));
        for (const auto& p : plans_) place(*bigger, p.get());
        generations_.push_back(std::move(bigger));
        current_.store(generations_.back().get(), std::memory_order_release);
    }
    place(*generations_.back(), plan.get());
    plans_.push_back(std::move(plan));
    return plans_.back().get();
}

std::vector<const Plan*> PlanTable::plans() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const Plan*> out;
    for (const auto& p : plans_) out.push_back(p.get());
    return out;
}

int PlanTable::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(plans_.size());
}

}  // namespace sgemm
