#include "src/dispatch/last_error.h"

#include <cstdarg>
#include <cstdio>
#include <new>
#include <vector>

namespace sgemm {
namespace {

// Most reasons fit here, so a bad argument on the hot path allocates nothing.
thread_local char short_text[1024] = "";
// A reason that did not fit short_text: a compile log, or two failures with their paths.
thread_local std::vector<char> long_text;
thread_local bool last_is_long = false;

}  // namespace

sgemm_dispatch_status_t fail(sgemm_dispatch_status_t status, const char* format, ...) {
    std::va_list args, args_again;
    va_start(args, format);
    va_copy(args_again, args);
    const int length = std::vsnprintf(short_text, sizeof short_text, format, args);
    last_is_long = false;
    if (length >= static_cast<int>(sizeof short_text)) {
        try {
            long_text.resize(static_cast<std::size_t>(length) + 1);
            std::vsnprintf(long_text.data(), long_text.size(), format, args_again);
            last_is_long = true;
        } catch (const std::bad_alloc&) {
            // Out of memory: the reason stays cut to short_text's length.
        }
    }
    va_end(args_again);
    va_end(args);
    return status;
}

const char* last_error() { return last_is_long ? long_text.data() : short_text; }

}  // namespace sgemm
