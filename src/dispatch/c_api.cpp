// The C API of include/sgemm/dispatch.h over sgemm::Dispatcher: handles, statuses, and no
// exception ever crosses it.
#include "src/dispatch/c_api.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "src/cuda/saved_context.h"
#include "src/dispatch/status_error.h"
#include "src/dispatch/last_error.h"

using sgemm::Dispatcher;
using sgemm::dispatcher_of;
using sgemm::fail;

extern "C" {

void sgemm_dispatch_options_init(sgemm_dispatch_options_t* options) {
    if (!options) return;
    std::memset(options, 0, sizeof *options);  // NULL path, device 0, cuBLAS, fp32, defaults
}

sgemm_dispatch_status_t sgemm_dispatch_create(sgemm_dispatch_t* handle, const sgemm_dispatch_options_t* options) {
    if (!handle) return fail(SGEMM_DISPATCH_INVALID_VALUE, "handle (the pointer to write it to) is NULL");
    *handle = nullptr;
    sgemm_dispatch_options_t o;
    sgemm_dispatch_options_init(&o);
    if (options) o = *options;
    // A create that fails after making the handle's device current (a database whose rows
    // cannot be read, say) gives the calling thread back the context it found: else its later
    // work would go to the other GPU (src/cuda/saved_context.h says why not by cudaSetDevice).
    const sgemm::SavedContext callers_context;
    const auto failed = [&](sgemm_dispatch_status_t status, const char* why) {
        callers_context.restore();
        return fail(status, "%s", why);
    };
    try {
        auto dispatcher = std::make_unique<Dispatcher>(o);
        *handle = sgemm::new_handle(dispatcher.get());
        dispatcher.release();  // the handle owns it now
        return SGEMM_DISPATCH_SUCCESS;
    } catch (const sgemm::StatusError& e) {
        return failed(e.status, e.what());
    } catch (const std::exception& e) {
        return failed(sgemm::status_of(e, SGEMM_DISPATCH_INTERNAL_ERROR), e.what());
    }
}

sgemm_dispatch_status_t sgemm_dispatch_gemm(sgemm_dispatch_t handle, sgemm_dispatch_op_t trans_a,
                                            sgemm_dispatch_op_t trans_b, int M, int N, int K, float alpha,
                                            const float* A, int lda, const float* B, int ldb, float beta, float* C,
                                            int ldc, struct CUstream_st* stream) {
    Dispatcher* d = dispatcher_of(handle);
    if (!d) return SGEMM_DISPATCH_INVALID_HANDLE;
    return d->gemm(sgemm::GemmCall{trans_a, trans_b, M, N, K, alpha, beta, A, lda, B, ldb, C, ldc}, stream);
}

sgemm_dispatch_status_t sgemm_dispatch_explain(sgemm_dispatch_t handle, sgemm_dispatch_op_t trans_a,
                                               sgemm_dispatch_op_t trans_b, int M, int N, int K, const float* A,
                                               int lda, const float* B, int ldb, const float* C, int ldc,
                                               char* buffer, size_t buffer_size, size_t* length) {
    // Whatever fails, the caller finds a text: an empty one, of length 0, not what was there
    // (a NULL buffer has no text to empty, but its length is set all the same).
    if (length) *length = 0;
    if (!buffer && buffer_size > 0) return fail(SGEMM_DISPATCH_INVALID_VALUE, "buffer is NULL, buffer_size is not 0");
    if (buffer_size > 0) buffer[0] = '\0';
    const Dispatcher* d = dispatcher_of(handle);
    if (!d) return SGEMM_DISPATCH_INVALID_HANDLE;
    try {
        // Only the pointers' alignment is read, so C is never written through.
        const std::string text =
            d->explain(sgemm::GemmCall{trans_a, trans_b, M, N, K, 1.0f, 0.0f, A, lda, B, ldb, const_cast<float*>(C), ldc});
        if (length) *length = text.size();
        if (buffer_size == 0) return fail(SGEMM_DISPATCH_BUFFER_TOO_SMALL, "explain needs %zu bytes", text.size() + 1);
        const std::size_t n = std::min(text.size(), buffer_size - 1);
        std::memcpy(buffer, text.data(), n);
        buffer[n] = '\0';
        return n < text.size() ? fail(SGEMM_DISPATCH_BUFFER_TOO_SMALL, "explain needs %zu bytes", text.size() + 1)
                               : SGEMM_DISPATCH_SUCCESS;
    } catch (const std::exception& e) {
        return fail(sgemm::status_of(e, SGEMM_DISPATCH_INTERNAL_ERROR), "%s", e.what());
    }
}

sgemm_dispatch_status_t sgemm_dispatch_query(sgemm_dispatch_t handle, sgemm_dispatch_op_t trans_a,
                                             sgemm_dispatch_op_t trans_b, int M, int N, int K, const float* A, int lda,
                                             const float* B, int ldb, const float* C, int ldc,
                                             sgemm_dispatch_choice_t* choice) {
    const Dispatcher* d = dispatcher_of(handle);
    if (!d) return SGEMM_DISPATCH_INVALID_HANDLE;
    if (!choice) return fail(SGEMM_DISPATCH_INVALID_VALUE, "choice is NULL");
    try {
        // Only the pointers' alignment is read, so C is never written through.
        return d->query(sgemm::GemmCall{trans_a, trans_b, M, N, K, 1.0f, 0.0f, A, lda, B, ldb, const_cast<float*>(C), ldc},
                        *choice);
    } catch (const std::exception& e) {
        return fail(sgemm::status_of(e, SGEMM_DISPATCH_INTERNAL_ERROR), "%s", e.what());
    }
}

sgemm_dispatch_status_t sgemm_dispatch_prepare(sgemm_dispatch_t handle, sgemm_dispatch_op_t trans_a,
                                               sgemm_dispatch_op_t trans_b, int M, int N, int K, const float* A,
                                               int lda, const float* B, int ldb, const float* C, int ldc) {
    Dispatcher* d = dispatcher_of(handle);
    if (!d) return SGEMM_DISPATCH_INVALID_HANDLE;
    // Only the pointers' alignment is read, so C is never written through.
    return d->prepare(sgemm::GemmCall{trans_a, trans_b, M, N, K, 1.0f, 0.0f, A, lda, B, ldb, const_cast<float*>(C), ldc});
}

sgemm_dispatch_status_t sgemm_dispatch_release_stream(sgemm_dispatch_t handle, struct CUstream_st* stream) {
    Dispatcher* d = dispatcher_of(handle);
    if (!d) return SGEMM_DISPATCH_INVALID_HANDLE;
    return d->release_stream(stream);
}

sgemm_dispatch_status_t sgemm_dispatch_get_info(sgemm_dispatch_t handle, sgemm_dispatch_info_t* info) {
    const Dispatcher* d = dispatcher_of(handle);
    if (!d) return SGEMM_DISPATCH_INVALID_HANDLE;
    if (!info) return fail(SGEMM_DISPATCH_INVALID_VALUE, "info is NULL");
    try {
        *info = d->info();
    } catch (const std::exception& e) {
        return fail(sgemm::status_of(e, SGEMM_DISPATCH_INTERNAL_ERROR), "%s", e.what());
    }
    return SGEMM_DISPATCH_SUCCESS;
}

sgemm_dispatch_status_t sgemm_dispatch_destroy(sgemm_dispatch_t handle) {
    if (!handle) return SGEMM_DISPATCH_SUCCESS;
    if (sgemm::inherited_through_fork(handle)) {
        // The parent's: its CUDA resources belong to a context this process cannot use, and
        // the thread that writes its misses runs in the parent alone. The copy is only marked
        // destroyed and retired; nothing of the parent's dispatcher is freed or written (the
        // process's exit frees its memory; the retired shell points to it till then).
        (void)sgemm::retire(handle);
        return SGEMM_DISPATCH_SUCCESS;
    }
    if (!dispatcher_of(handle)) return SGEMM_DISPATCH_INVALID_HANDLE;
    Dispatcher* d = sgemm::retire(handle);
    const sgemm_dispatch_status_t status = d->finish();  // the handle is gone either way
    delete d;
    return status;
}

const char* sgemm_dispatch_status_string(sgemm_dispatch_status_t status) {
    switch (status) {
        case SGEMM_DISPATCH_SUCCESS: return "SGEMM_DISPATCH_SUCCESS: no error";
        case SGEMM_DISPATCH_INVALID_HANDLE:
            return "SGEMM_DISPATCH_INVALID_HANDLE: NULL, destroyed already, not from create, or a forked parent's";
        case SGEMM_DISPATCH_INVALID_VALUE: return "SGEMM_DISPATCH_INVALID_VALUE: a NULL pointer, or an option or op out of range";
        case SGEMM_DISPATCH_INVALID_SIZE: return "SGEMM_DISPATCH_INVALID_SIZE: M, N or K negative";
        case SGEMM_DISPATCH_INVALID_LEADING_DIMENSION:
            return "SGEMM_DISPATCH_INVALID_LEADING_DIMENSION: lda, ldb or ldc below the stored row length or 1";
        case SGEMM_DISPATCH_MISALIGNED: return "SGEMM_DISPATCH_MISALIGNED: a pointer that is not float-aligned";
        case SGEMM_DISPATCH_NO_DEVICE: return "SGEMM_DISPATCH_NO_DEVICE: no CUDA device is visible, or no such ordinal";
        case SGEMM_DISPATCH_WRONG_DEVICE:
            return "SGEMM_DISPATCH_WRONG_DEVICE: the calling thread's current device is not the handle's, or the "
                   "stream belongs to another device or CUDA context";
        case SGEMM_DISPATCH_DATABASE_ERROR:
            return "SGEMM_DISPATCH_DATABASE_ERROR: the tuning database is missing, unreadable, foreign, of a "
                   "newer schema, locked, or not writable for record_misses";
        case SGEMM_DISPATCH_NO_KERNEL:
            return "SGEMM_DISPATCH_NO_KERNEL: no kernel found and the fallback policy is ERROR, or BUILTIN where the "
                   "built-in kernel cannot run the shape";
        case SGEMM_DISPATCH_TOO_MANY_STREAMS:
            return "SGEMM_DISPATCH_TOO_MANY_STREAMS: every per-stream workspace belongs to another stream (streams "
                   "keep theirs until sgemm_dispatch_release_stream)";
        case SGEMM_DISPATCH_COMPILE_ERROR:
            return "SGEMM_DISPATCH_COMPILE_ERROR: NVRTC failed on a missing binary, or on the kernel that scales C";
        case SGEMM_DISPATCH_CUDA_ERROR: return "SGEMM_DISPATCH_CUDA_ERROR: the CUDA runtime failed";
        case SGEMM_DISPATCH_CUBLAS_ERROR: return "SGEMM_DISPATCH_CUBLAS_ERROR: cuBLAS failed";
        case SGEMM_DISPATCH_BUFFER_TOO_SMALL: return "SGEMM_DISPATCH_BUFFER_TOO_SMALL: the text was cut to fit";
        case SGEMM_DISPATCH_INTERNAL_ERROR: return "SGEMM_DISPATCH_INTERNAL_ERROR: a bug in libsgemm_dispatch";
        case SGEMM_DISPATCH_HOST_ERROR:
            return "SGEMM_DISPATCH_HOST_ERROR: the host refused memory or a thread";
    }
    return "unknown status";
}

const char* sgemm_dispatch_last_error(void) { return sgemm::last_error(); }

const char* sgemm_dispatch_version(void) { return SGEMM_VERSION; }

}  // extern "C"
