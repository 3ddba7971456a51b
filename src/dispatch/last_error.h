// The reason for the last failure in this thread, behind sgemm_dispatch_last_error(), whole
// however long. A reason that fits a fixed thread-local buffer allocates nothing.
#pragma once
#include <sgemm/dispatch.h>

namespace sgemm {

// Formats the reason (printf-style) and returns `status`, so a failing path can say both in
// one statement: `return fail(SGEMM_DISPATCH_INVALID_SIZE, "M=%d", M);`
sgemm_dispatch_status_t fail(sgemm_dispatch_status_t status, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// The text the last fail() in this thread wrote; "" before any.
const char* last_error();

}  // namespace sgemm
