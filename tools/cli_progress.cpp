#include "tools/cli_progress.h"

namespace sgemm {

bool SteadyLines::due(Clock::time_point now) {
    if (now - last_ < interval_) return false;
    last_ = now;
    return true;
}

}  // namespace sgemm
