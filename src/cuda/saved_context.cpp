#include "src/cuda/saved_context.h"

#include "src/cuda/driver_contexts.h"

namespace sgemm {

SavedContext::SavedContext() noexcept {
    const std::optional<CUcontext> current = current_context();
    known_ = current.has_value();
    if (known_) context_ = *current;
}

void SavedContext::restore() const noexcept {
    if (known_) (void)make_current(context_);
}

}  // namespace sgemm
