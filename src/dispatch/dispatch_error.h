// A failure of create with the status the C API returns for it.
#pragma once
#include <sgemm/dispatch.h>

#include "src/util/error.h"

namespace sgemm {

struct DispatchError : Error {
    DispatchError(sgemm_dispatch_status_t status, const std::string& what) : Error(what), status(status) {}
    sgemm_dispatch_status_t status;
};

}  // namespace sgemm
