// A failure inside the library with the status the C API returns for it. (Not the public
// sgemm::DispatchError of dispatch.hpp, which callers catch.)
#pragma once
#include <sgemm/dispatch.h>

#include <new>
#include <string>
#include <system_error>

#include "src/cuda/check.h"
#include "src/util/error.h"

namespace sgemm {

struct StatusError : Error {
    StatusError(sgemm_dispatch_status_t status, const std::string& what) : Error(what), status(status) {}
    sgemm_dispatch_status_t status;
};

// The status of a failure `e` that carries none of its own: the host's refusal of memory or
// of a thread (a limit on tasks) is HOST_ERROR, not a bug nor the CUDA runtime's; anything
// else is `otherwise`.
inline sgemm_dispatch_status_t status_of(const std::exception& e, sgemm_dispatch_status_t otherwise) {
    if (dynamic_cast<const std::bad_alloc*>(&e)) return SGEMM_DISPATCH_HOST_ERROR;
    const auto* system = dynamic_cast<const std::system_error*>(&e);
    if (system && system->code() == std::errc::resource_unavailable_try_again) return SGEMM_DISPATCH_HOST_ERROR;
    return otherwise;
}

// Runs one step of create, turning its failure into a StatusError: `status` names what the
// step does, with three exceptions whatever the step. No device is NO_DEVICE; a CUDA error is
// CUDA_ERROR, for the device is there but the runtime refused it (a GPU another process holds
// in exclusive mode, a context a fault ended), which NO_DEVICE would hide; the host's refusal
// is HOST_ERROR (status_of).
template <typename Step>
auto run_step(sgemm_dispatch_status_t status, const char* what, Step&& run) {
    try {
        return run();
    } catch (const StatusError&) {
        throw;
    } catch (const NoDeviceError& e) {
        throw StatusError(SGEMM_DISPATCH_NO_DEVICE, e.what());
    } catch (const CudaError& e) {
        throw StatusError(SGEMM_DISPATCH_CUDA_ERROR, std::string(what) + ": " + e.what());
    } catch (const std::exception& e) {
        throw StatusError(status_of(e, status), std::string(what) + ": " + e.what());
    }
}

}  // namespace sgemm
