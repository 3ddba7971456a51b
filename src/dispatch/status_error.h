// A failure inside the library with the status the C API returns for it. (Not the public
// sgemm::DispatchError of dispatch.hpp, which callers catch.)
#pragma once
#include <sgemm/dispatch.h>

#include "src/util/error.h"

namespace sgemm {

struct StatusError : Error {
    StatusError(sgemm_dispatch_status_t status, const std::string& what) : Error(what), status(status) {}
    sgemm_dispatch_status_t status;
};

}  // namespace sgemm
