// Errors are values with messages: every failure in the library is an sgemm::Error whose
// text says what failed and why, so a tool can print it on one line and exit.
#pragma once
#include <stdexcept>
#include <string>

namespace sgemm {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// No CUDA device can be used (no GPU, no driver): tools report it and exit with 2.
struct NoDeviceError : Error {
    using Error::Error;
};

// A device ordinal past the GPUs that are visible: the user's argument, so tools exit with 1.
struct NoSuchDeviceError : Error {
    using Error::Error;
};

}  // namespace sgemm
