// The handle behind sgemm_dispatch_t, for the library's own tools and tests (the shared
// library exports only the C API).
#pragma once
#include <sgemm/dispatch.h>

#include "src/dispatch/dispatcher.h"

namespace sgemm {

// The dispatcher of a live handle, or nullptr (with last_error() set) for NULL, a destroyed
// handle, memory that is no handle, or a handle a fork() copied from the parent process.
Dispatcher* dispatcher_of(sgemm_dispatch_t handle);

}  // namespace sgemm
