// The C++ face of libsgemm_dispatch: an RAII owner of a handle whose failures throw. Header
// only (C++14 or later), over the C API of dispatch.h (whose comment holds the contract), so
// no C++ symbol crosses the library boundary.
#pragma once
// Before C++14 (std::exchange and the rest) this is said plainly, and the rest of the file
// is left out, so that no error from inside the class follows it.
#if !defined(__cplusplus) || __cplusplus < 201402L
#error "sgemm/dispatch.hpp needs C++14 or later; C and older C++ use sgemm/dispatch.h"
#else
#include <sgemm/dispatch.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace sgemm {

// A failed dispatch call: the status, and sgemm_dispatch_last_error()'s reason.
class DispatchError : public std::runtime_error {
public:
    explicit DispatchError(sgemm_dispatch_status_t status)
        : std::runtime_error(std::string(sgemm_dispatch_status_string(status)) + ": " + sgemm_dispatch_last_error()),
          status_(status) {}
    sgemm_dispatch_status_t status() const { return status_; }

private:
    sgemm_dispatch_status_t status_;
};

class Dispatch {
public:
    static sgemm_dispatch_options_t default_options() {
        sgemm_dispatch_options_t options;
        sgemm_dispatch_options_init(&options);
        return options;
    }

    explicit Dispatch(const sgemm_dispatch_options_t& options = default_options()) {
        check(sgemm_dispatch_create(&handle_, &options));
    }
    ~Dispatch() { sgemm_dispatch_destroy(handle_); }
    Dispatch(const Dispatch&) = delete;
    Dispatch& operator=(const Dispatch&) = delete;
    Dispatch(Dispatch&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    // The handle held before is destroyed now, not left to `other`.
    Dispatch& operator=(Dispatch&& other) noexcept {
        if (this != &other) {
            sgemm_dispatch_destroy(handle_);
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }

    // Row-major C = alpha * op(A) * op(B) + beta * C on `stream`; asynchronous.
    void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
              int ldb, float beta, float* c, int ldc, CUstream_st* stream) const {
        check(sgemm_dispatch_gemm(handle_, op(trans_a), op(trans_b), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                  stream));
    }

    // Which kernel gemm would launch for these arguments, and why.
    std::string explain(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b,
                        int ldb, const float* c, int ldc) const {
        std::size_t length = 0;
        std::string text(1024, '\0');
        for (;;) {
            const sgemm_dispatch_status_t status = sgemm_dispatch_explain(
                handle_, op(trans_a), op(trans_b), m, n, k, a, lda, b, ldb, c, ldc, &text[0], text.size(), &length);
            if (status != SGEMM_DISPATCH_BUFFER_TOO_SMALL) {
                check(status);
                text.resize(length);
                return text;
            }
            text.resize(length + 1);
        }
    }

    // What gemm would do with these arguments, as fields (dispatch.h: sgemm_dispatch_query).
    sgemm_dispatch_choice_t query(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda,
                                  const float* b, int ldb, const float* c, int ldc) const {
        sgemm_dispatch_choice_t choice;
        check(sgemm_dispatch_query(handle_, op(trans_a), op(trans_b), m, n, k, a, lda, b, ldb, c, ldc, &choice));
        return choice;
    }

    // Plans these arguments' shape key without a launch (dispatch.h: sgemm_dispatch_prepare).
    void prepare(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                 const float* c, int ldc) const {
        check(sgemm_dispatch_prepare(handle_, op(trans_a), op(trans_b), m, n, k, a, lda, b, ldb, c, ldc));
    }

    // Gives back the workspace `stream` holds (dispatch.h: sgemm_dispatch_release_stream).
    void release_stream(CUstream_st* stream) const { check(sgemm_dispatch_release_stream(handle_, stream)); }

    sgemm_dispatch_info_t info() const {
        sgemm_dispatch_info_t info;
        check(sgemm_dispatch_get_info(handle_, &info));
        return info;
    }

    sgemm_dispatch_t get() const { return handle_; }

    // Destroys the handle now and returns sgemm_dispatch_destroy's status, which the
    // destructor has to drop (a failed device wait, or misses that could not be written);
    // the object is empty after it, and an empty one returns SUCCESS.
    sgemm_dispatch_status_t reset() noexcept { return sgemm_dispatch_destroy(std::exchange(handle_, nullptr)); }

    // Gives up the handle without destroying it: the caller owns it now (sgemm_dispatch_destroy).
    sgemm_dispatch_t release() noexcept { return std::exchange(handle_, nullptr); }

private:
    static sgemm_dispatch_op_t op(bool transposed) { return transposed ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N; }
    static void check(sgemm_dispatch_status_t status) {
        if (status != SGEMM_DISPATCH_SUCCESS) throw DispatchError(status);
    }

    sgemm_dispatch_t handle_ = nullptr;
};

}  // namespace sgemm

#endif  // C++14 or later
