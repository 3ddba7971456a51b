// A handle's dispatcher (dispatcher_of) and its class, for the library's own tools and tests
// (the shared library exports only the C API).
#pragma once
#include <sgemm/dispatch.h>

#include "src/dispatch/dispatcher.h"
#include "src/dispatch/handle_shell.h"  // dispatcher_of
