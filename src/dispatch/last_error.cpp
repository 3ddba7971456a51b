#include "src/dispatch/last_error.h"

#include <cstdarg>
#include <cstdio>

namespace sgemm {
namespace {

thread_local char last_error_text[1024] = "";

}  // namespace

sgemm_dispatch_status_t fail(sgemm_dispatch_status_t status, const char* format, ...) {
    std::va_list args;
    va_start(args, format);
    std::vsnprintf(last_error_text, sizeof last_error_text, format, args);
    va_end(args);
    return status;
}

const char* last_error() { return last_error_text; }

}  // namespace sgemm
