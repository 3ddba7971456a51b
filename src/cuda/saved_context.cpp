#include "src/cuda/saved_context.h"

#include "src/cuda/driver_contexts.h"

namespace sgemm {

SavedContext::SavedContext() noexcept : context_(current_context()) {}

void SavedContext::restore() const noexcept {
    if (context_) (void)make_current(*context_);
}

}  // namespace sgemm
