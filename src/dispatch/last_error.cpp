#include "src/dispatch/last_error.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace sgemm {
namespace {

// Every thread-local here but LongTextOwner is trivially destructible, so it stays usable
// while the thread (or, for the main thread, the process) runs its exit handlers: a
// destructor or atexit handler may still fail() and read the reason.

// Most reasons fit here, so a bad argument on the hot path allocates nothing.
thread_local char short_text[1024] = "";
// A reason that did not fit short_text (a compile log, two failures with their paths), in
// memory from malloc, freed by LongTextOwner when the thread ends.
thread_local char* long_text = nullptr;
thread_local std::size_t long_capacity = 0;
thread_local bool last_is_long = false;
thread_local bool thread_ending = false;  // long_text is freed for good: reasons are cut again

struct LongTextOwner {
    ~LongTextOwner() {
        std::free(long_text);
        long_text = nullptr;
        long_capacity = 0;
        last_is_long = false;
        thread_ending = true;
    }
    void keep() {}  // a call, so that this thread constructs its owner (and so its destructor runs)
};
thread_local LongTextOwner long_text_owner;

// Room for `bytes` in long_text; false (and long_text unchanged) when there is none.
bool reserve_long_text(std::size_t bytes) {
    if (thread_ending) return false;
    if (bytes <= long_capacity) return true;
    long_text_owner.keep();
    char* grown = static_cast<char*>(std::realloc(long_text, bytes));
    if (!grown) return false;
    long_text = grown;
    long_capacity = bytes;
    return true;
}

}  // namespace

sgemm_dispatch_status_t fail(sgemm_dispatch_status_t status, const char* format, ...) {
    std::va_list args, args_again;
    va_start(args, format);
    va_copy(args_again, args);
    const int length = std::vsnprintf(short_text, sizeof short_text, format, args);
    last_is_long = false;
    // Out of memory, or at the thread's end, the reason stays cut to short_text's length.
    if (length >= static_cast<int>(sizeof short_text) && reserve_long_text(static_cast<std::size_t>(length) + 1)) {
        std::vsnprintf(long_text, long_capacity, format, args_again);
        last_is_long = true;
    }
    va_end(args_again);
    va_end(args);
    return status;
}

const char* last_error() { return last_is_long ? long_text : short_text; }

}  // namespace sgemm
