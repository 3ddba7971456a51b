/* libsgemm_dispatch: production SGEMMs through the tuning database.
 *
 * One call per GEMM launches the kernel that sgemm-tune found fastest for the call's shape
 * on this GPU, on the caller's stream: no compilation, no allocation and no
 * synchronisation on the hot path. A C API, usable from C99 and any FFI; include/sgemm/
 * dispatch.hpp wraps it for C++.
 *
 * The GEMM, row-major as in the rest of the project:
 *     C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C
 * with element (i, j) of a matrix X at X[i * ldx + j]; M, N, K, A, B and C are the
 * functions' parameters m, n, k, a, b and c (lower case: a program's own #define K cannot
 * meet them). A is stored M x K (lda >= K), or
 * K x M when trans_a is SGEMM_DISPATCH_OP_T (lda >= M); B is stored K x N (ldb >= N), or
 * N x K when transposed (ldb >= K); ldc >= N; and, as in cuBLAS, each is at least 1. With
 * beta == 0, C is not read. C must not overlap A or B (the kernels read A and B while they
 * write C). M or N of 0 is an empty product, as in cuBLAS: gemm checks the leading
 * dimensions, not the pointers nor the current device, and returns SUCCESS having touched
 * nothing. Where K or alpha is 0 (M and N above 0), no product is computed, as in BLAS: C =
 * beta * C alone, and A and B are not read (they may be NULL or misaligned, and a NaN in them
 * does not reach C). beta == 1 then enqueues nothing, beta == 0 a memset, and any other beta
 * a small kernel of the library's own, which NVRTC compiles at the handle's first such call
 * (some tens of milliseconds; sgemm_dispatch_prepare with k = 0 does it before). Such calls
 * take no workspace and count no miss: there is no product to tune.
 *
 * Choosing the kernel (sgemm-db explain prints the same decision):
 *   1. exact    the database's winner for this device and shape key (M, N, K, transposes,
 *               precision, and the alignment class of the pointers and leading dimensions:
 *               16, 8 or 4 bytes);
 *   2. nearest  else the winner of the nearest tuned shape with the same transposes,
 *               precision and alignment class and an M within a factor of 2 (nearest in
 *               log2 M first, then log2 N + log2 K) whose kernel can run this shape;
 *               a split-K winner whose partials at this shape would not fit the per-stream
 *               workspace (sized for every M this rule gives it at its own N and K) runs
 *               with the most slices that fit, if that launches at least as many blocks as
 *               the winner does at its own shape (explain says "re-split");
 *   3. fallback else the fallback policy: cuBLAS (the default), the built-in default kernel,
 *               or SGEMM_DISPATCH_NO_KERNEL.
 * A winner whose kernel is cuBLAS calls cuBLAS. Only rows of this very device are used: the
 * device's fingerprint covers the GPU, the driver, the CUDA runtime, NVRTC and this library's
 * version, and kernels tuned with other kernel sources (templates or family code) are skipped.
 *
 * Threading and streams:
 *   - sgemm_dispatch_gemm, _prepare, _release_stream, _explain, _query and _get_info may be
 *     called from any number of threads at once, on any number of streams (and several
 *     threads on one stream: a call whose kernels pass data through the stream's workspace,
 *     split-K partials or staged operands, enqueues them back to back), except that
 *     _release_stream must not race with a gemm on the stream it releases. _create and
 *     _destroy must not race with any other call on the same handle.
 *   - gemm, prepare and release_stream run on the handle's device: the calling thread's
 *     current device (cudaSetDevice) must be it, else SGEMM_DISPATCH_WRONG_DEVICE (an empty
 *     product, which runs nothing, succeeds on any). explain,
 *     query and get_info touch no device and check none. create and destroy make the handle's
 *     device the calling thread's current device; a create that fails leaves the thread's
 *     current CUDA context as it found it (none, where it had none: the runtime may then
 *     still take the handle's device for the thread's next call, so cudaSetDevice first).
 *     The workspaces and cuBLAS handles (below) belong to the context current at create,
 *     which cudaSetDevice makes the device's primary one. A call that needs them on a stream
 *     of another context returns WRONG_DEVICE and takes none: a stream of another device, or
 *     one made while a context of the driver API was current, or 0 or cudaStreamPerThread
 *     while one is current. A green context's stream is served (its memory is the primary
 *     context's) where both this build's CUDA and the driver are 12.5 or newer; before that
 *     CUDA names no green context's primary context, and it is refused. The stream of a
 *     call that needs neither is not checked, so one stream may serve one shape and be
 *     refused for another: give streams of the primary context. A handle does not outlive
 *     its context: destroy it before cudaDeviceReset.
 *   - gemm only enqueues work: A, B and C must stay valid until `stream` reaches it.
 *   - Split-K kernels need a zeroed scratch workspace, staging kernels (warptile ALIGNED=2,
 *     for misaligned operands) room for the operands they copy, and cuBLAS a handle; all are per
 *     stream. create allocates `max_streams` of each; a stream takes one on its first call
 *     that needs it and keeps it until sgemm_dispatch_release_stream gives it back or the
 *     handle is destroyed. A call on one stream more than that returns
 *     SGEMM_DISPATCH_TOO_MANY_STREAMS (kernels that need neither still run); one on
 *     cudaStreamPerThread after a device fault returns CUDA_ERROR, since the runtime no
 *     longer names the stream. The legacy
 *     default stream (0) is one stream; cudaStreamPerThread is one stream per thread that
 *     uses it. Synchronise a stream before destroying it: a new stream that reuses its handle
 *     value reuses its workspace, and is not checked again for its context, so where the
 *     process uses other devices or driver-API contexts too, release the stream first.
 *     Engines that create streams per request, or threads that use cudaStreamPerThread and
 *     end, release them, or the workspaces run out.
 *   - CUDA stream capture: gemm is legal inside capture in every capture mode, so a graph
 *     replays the tuned kernels. The first call of a shape key the handle has not seen does
 *     host work (the selection, and setting a kernel's shared-memory limit), in relaxed
 *     capture mode for that moment; sgemm_dispatch_prepare does it before capture instead.
 *     So does the handle's first call that scales C alone by a beta other than 0 and 1 (K or
 *     alpha 0: NVRTC compiles that kernel and loads it), which prepare with k = 0 does
 *     before.
 *     A captured split-K or staging kernel, or cuBLAS call (a winner or the fallback), keeps
 *     the capturing stream's workspace: launch the graph on that stream (or while nothing else
 *     uses that stream's workspace), one launch at a time.
 *     Destroy graphs that hold dispatch calls before the handle. create and destroy
 *     allocate, free and synchronise the device, which CUDA refuses while another thread
 *     captures in cudaStreamCaptureModeGlobal (and which breaks that capture): create and
 *     destroy handles while no thread captures, or capture in thread-local or relaxed mode.
 *   - destroy waits for the whole device (cudaDeviceSynchronize: other libraries' streams
 *     too), writes pending misses and frees everything but a 32-byte shell, kept so that a
 *     later call with the handle is reported (SGEMM_DISPATCH_INVALID_HANDLE) rather than
 *     undefined. The library keeps its shells reachable, so LeakSanitizer (an
 *     AddressSanitizer build) does not report them as leaks, unless the library was
 *     unloaded (dlclose) before the check. It returns CUDA_ERROR if the wait failed (the
 *     misses are still written, and the last error names a failed write too), else
 *     DATABASE_ERROR if the last misses could not be written; the handle is destroyed
 *     either way.
 *   - A handle belongs to the process that created it. A child made by fork() inherits a
 *     copy, but CUDA cannot be used in a child forked after CUDA started in its parent, and
 *     the thread that writes misses runs only in the parent: the child's calls with the copy
 *     return SGEMM_DISPATCH_INVALID_HANDLE, and its destroy returns SUCCESS having freed and
 *     written nothing (the parent writes its own misses). Workers that need dispatch are
 *     forked before the parent's first create, or started by exec or posix_spawn (Python's
 *     multiprocessing "spawn"), and create their own handles. (A child made without fork's
 *     handlers, by glibc's _Fork or a raw clone, is not told apart: it must not use the copy.)
 *   - The first call of each distinct shape key (M, N, K, transposes, alignment class) adds
 *     a plan that stays until destroy: an engine that calls with unboundedly many M (prefill
 *     token counts) grows the handle's host memory by one small plan per key.
 *   - Device memory: each of the max_streams workspaces holds the split-K scratch or staged
 *     operands the winners need at their own shapes, and a split-K winner's scratch at every
 *     M the nearest rule gives it at its own N and K too (up to twice its M: a batch between
 *     two tuned ones runs as tuned; with `deterministic`, a stand-in that sums its slices in a
 *     second kernel needs these partials where the atomic winner needed a few counters)
 *     (info.workspace_bytes: a staged 4096 x 4096 operand is
 *     64 MiB, a 16384 x 16384 one 1 GiB; lower max_streams where that is too much; a staging
 *     winner tuned at alignment class 16 copies nothing and needs none) and,
 *     where cuBLAS may be called, 32 MiB for cuBLAS; with the defaults (8 streams, cuBLAS
 *     fallback) that is at least 256 MiB.
 *
 * Misses: with record_misses, every call whose shape key has no exact winner is counted in
 * memory (one atomic add) once it is served, or refused with NO_KERNEL (one refused with
 * TOO_MANY_STREAMS, or failed by CUDA or cuBLAS, which an engine may retry, is not), and the
 * counts are written to the database's misses table from a
 * background thread every miss_flush_ms and at destroy, under a recorder of the file, the
 * device and the machine's boot (one row per shape key for all the processes of a boot that
 * use the file; a row per process and shape key where the filesystem keeps no birth time
 * or the boot id cannot be read), so that `sgemm-db merge` counts them once however often a
 * file is merged.
 * The count is made on the host as gemm is called: a call captured into a CUDA graph counts
 * once, at capture, not at each launch of the graph. For an engine that replays graphs the
 * counts say which shapes missed rather than how often.
 * `sgemm-tune --from-misses` then tunes them: record in production, tune later.
 *
 * Atomics: a database tuned with `sgemm-tune --allow-atomics` may hold split-K winners whose
 * slices add into C with float atomics: C then varies in its last bits from run to run, as
 * the order of the adds does (explain and sgemm-db explain say so). With
 * options.deterministic, each such winner is replaced by the fastest kernel without atomics
 * that the tune measured for its shape (or cuBLAS, where cuBLAS was faster), else, in a
 * database that holds no such measurement (an import), by the same tiles and split with the
 * slices summed in a fixed order; a kernel not in the binary cache is compiled at create (an
 * export carries only the winners' binaries). explain, and sgemm-db explain --deterministic,
 * name what runs. Every other kernel, and cuBLAS (whose atomics mode this library leaves at
 * its default, not allowed), repeats bit for bit with or without it.
 *
 * ABI: the soname is libsgemm_dispatch.so.0.4 for every 0.4.x release. Before 1.0 each minor
 * version has its own soname, since it may change the structs below (0.4 added
 * winners_replaced to sgemm_dispatch_info_t, before kernels_loaded; 0.3 added deterministic
 * to the options); a program linked against this header's library is never loaded with a
 * library whose structs differ. A program that opens the library itself (dlopen, an FFI) can compare
 * sgemm_dispatch_version() with SGEMM_DISPATCH_VERSION_MAJOR and _MINOR below, which also
 * let C code test at compile time for a field that came in a later version.
 *
 * Errors: every function that can fail returns a status; bad arguments touch nothing. The reason of the
 * last failure in the calling thread is in sgemm_dispatch_last_error(). A later release may add
 * statuses (HOST_ERROR came after the others): take any status but SUCCESS as a failure, and
 * name it with sgemm_dispatch_status_string(). Likewise it may add decisions and routes
 * (SCALE_C came after the others): give a value a program does not know a default case.
 */
#ifndef SGEMM_DISPATCH_H
#define SGEMM_DISPATCH_H

#include <stddef.h>

/* The version of this header, as sgemm_dispatch_version() gives the library's. */
#define SGEMM_DISPATCH_VERSION_MAJOR 0
#define SGEMM_DISPATCH_VERSION_MINOR 4
#define SGEMM_DISPATCH_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* cudaStream_t is `struct CUstream_st *`: declared here so that no CUDA header is needed. */
struct CUstream_st;

typedef struct sgemm_dispatch* sgemm_dispatch_t;

typedef enum sgemm_dispatch_status {
    SGEMM_DISPATCH_SUCCESS = 0,
    SGEMM_DISPATCH_INVALID_HANDLE = 1,            /* NULL, destroyed, no handle, or a forked parent's */
    SGEMM_DISPATCH_INVALID_VALUE = 2,             /* a NULL pointer, or an option or op out of range;
                                                     create: the BUILTIN fallback on a GPU before
                                                     sm_80, or record_misses and without_database
                                                     with db_path NULL and no default path (see
                                                     db_path: no HOME nor home directory either;
                                                     without without_database, DATABASE_ERROR) */
    SGEMM_DISPATCH_INVALID_SIZE = 3,              /* M, N or K negative */
    SGEMM_DISPATCH_INVALID_LEADING_DIMENSION = 4, /* lda, ldb or ldc below the stored row length or 1 */
    SGEMM_DISPATCH_MISALIGNED = 5,                /* a pointer that is not float-aligned */
    SGEMM_DISPATCH_NO_DEVICE = 6,                 /* no CUDA device is visible, or no such ordinal */
    SGEMM_DISPATCH_WRONG_DEVICE = 7,              /* the calling thread's current device is another,
                                                     or the stream belongs to another device or
                                                     CUDA context (where it needs a workspace) */
    SGEMM_DISPATCH_DATABASE_ERROR = 8,            /* missing, unreadable, foreign or newer
                                                     database, locked past 5 s, or one that
                                                     record_misses cannot write */
    SGEMM_DISPATCH_NO_KERNEL = 9,                 /* nothing found and the fallback policy is ERROR, or BUILTIN
                                                     where the built-in kernel cannot run the shape (a size
                                                     past 2^31 - 4096) */
    SGEMM_DISPATCH_TOO_MANY_STREAMS = 10,         /* every per-stream workspace is taken */
    SGEMM_DISPATCH_COMPILE_ERROR = 11,            /* NVRTC failed on a binary missing from the cache
                                                     (create), or on the kernel that scales C
                                                     alone (gemm or prepare: K or alpha 0) */
    SGEMM_DISPATCH_CUDA_ERROR = 12,               /* the CUDA runtime failed (launch, allocation,
                                                     a device or context it refused, a driver
                                                     that cannot reach the GPUs it has) */
    SGEMM_DISPATCH_CUBLAS_ERROR = 13,
    SGEMM_DISPATCH_BUFFER_TOO_SMALL = 14,         /* explain: the text was cut to fit */
    SGEMM_DISPATCH_INTERNAL_ERROR = 15,
    SGEMM_DISPATCH_HOST_ERROR = 16                /* the host refused memory or a thread */
} sgemm_dispatch_status_t;

typedef enum sgemm_dispatch_op {
    SGEMM_DISPATCH_OP_N = 0, /* stored as the product reads it */
    SGEMM_DISPATCH_OP_T = 1  /* stored transposed */
} sgemm_dispatch_op_t;

typedef enum sgemm_dispatch_fallback {
    SGEMM_DISPATCH_FALLBACK_CUBLAS = 0,  /* cuBLAS (the default) */
    SGEMM_DISPATCH_FALLBACK_BUILTIN = 1, /* the built-in default kernel (warptile at its defaults); for a
                                            size past 2^31 - 4096, which no kernel here takes,
                                            SGEMM_DISPATCH_NO_KERNEL; it needs sm_80 or newer:
                                            on an older GPU create returns INVALID_VALUE */
    SGEMM_DISPATCH_FALLBACK_ERROR = 2    /* return SGEMM_DISPATCH_NO_KERNEL */
} sgemm_dispatch_fallback_t;

typedef enum sgemm_dispatch_precision {
    SGEMM_DISPATCH_FP32 = 0, /* IEEE fp32 FMA, cuBLAS's default math */
    SGEMM_DISPATCH_TF32 = 1  /* inputs rounded to TF32: tf32 winners, cuBLAS in TF32 mode (sgemm-tune
                                does not tune tf32 yet, so unless tf32 winners were imported, such
                                a handle runs its fallback) */
} sgemm_dispatch_precision_t;

typedef struct sgemm_dispatch_options {
    const char* db_path;                  /* NULL: $SGEMM_DB if not empty, else $XDG_DATA_HOME/
                                             sgemm/tuning.db if absolute, else ~/.local/share/
                                             sgemm/tuning.db ("" is INVALID_VALUE);
                                             a relative path is taken against the working directory
                                             at create, misses written later included */
    int device;                           /* CUDA device ordinal */
    sgemm_dispatch_fallback_t fallback;
    sgemm_dispatch_precision_t precision;
    int record_misses;                    /* nonzero: count misses and write them to the database,
                                             which this process must then be able to write
                                             (with without_database, a missing one is
                                             created by the first write, whole, with its
                                             misses, or not at all, where its file system
                                             takes hard links; without it, one
                                             moved or removed after create is not made
                                             again: the counts wait until it is back, and
                                             explain says why) */
    int without_database;                 /* nonzero: a database that cannot be read (missing,
                                             unreadable, damaged, foreign, of a newer schema, or
                                             locked past 5 s) is no error; every shape then takes
                                             the fallback, and explain says why */
    int max_streams;                      /* per-stream workspaces; 0: 8; at most 1024 */
    int miss_flush_ms;                    /* how often misses are written; 0: 10000 */
    int deterministic;                    /* nonzero: no kernel adds into C with float atomics, so
                                             a call repeats bit for bit (see "Atomics" above) */
} sgemm_dispatch_options_t;

/* What create did, and what the handle holds now. */
typedef struct sgemm_dispatch_info {
    int winners;                   /* this device's winners of the handle's precision in use */
    int winners_skipped;           /* those this build cannot use, or that add with atomics and
                                      have no stand-in (explain says why) */
    int winners_replaced;          /* of `winners`: atomic winners run by a stand-in (deterministic) */
    int kernels_loaded;            /* distinct kernels loaded on the device (with the kernel that
                                      scales C, once a call or prepare loaded it) */
    int kernels_compiled;          /* of which NVRTC compiled: binaries missing from the cache,
                                      and that kernel (its compile is not in compile_ms) */
    double create_ms;              /* the whole of create */
    double device_ms;              /* of which: CUDA context creation and device properties */
    double database_ms;            /* of which: opening the database, reading the winners and binaries */
    double kernels_ms;             /* of which: loading the kernels (NVRTC included) */
    double compile_ms;             /* of kernels_ms: NVRTC */
    double memory_ms;              /* of which: workspaces and cuBLAS handles, with cuBLAS's
                                      first call (create) */
    int shapes_prepared;           /* shape keys planned in the hash map: a launch ready, cuBLAS,
                                      or NO_KERNEL */
    int streams_used;              /* streams holding a workspace */
    int max_streams;
    size_t workspace_bytes;        /* workspace per stream: split-K partials or staged operands */
    long long misses_pending;      /* counted, not yet written */
    long long misses_written;
} sgemm_dispatch_info_t;

/* What gemm would do with a call (sgemm_dispatch_query): which rule chose, what runs. */
typedef enum sgemm_dispatch_decision {
    SGEMM_DISPATCH_DECISION_EXACT = 0,    /* the database's winner for the call's shape key */
    SGEMM_DISPATCH_DECISION_NEAREST = 1,  /* the winner of the nearest tuned shape */
    SGEMM_DISPATCH_DECISION_FALLBACK = 2, /* the fallback policy */
    SGEMM_DISPATCH_DECISION_EMPTY = 3,    /* M or N is 0: nothing to do */
    SGEMM_DISPATCH_DECISION_SCALE_C = 4   /* K is 0: C = beta * C alone (gemm with alpha == 0 does
                                             the same, which query, taking no alpha, cannot say) */
} sgemm_dispatch_decision_t;

typedef enum sgemm_dispatch_route {
    SGEMM_DISPATCH_ROUTE_KERNEL = 0,  /* a tuned kernel of this library */
    SGEMM_DISPATCH_ROUTE_CUBLAS = 1,  /* cuBLAS */
    SGEMM_DISPATCH_ROUTE_BUILTIN = 2, /* the built-in default kernel */
    SGEMM_DISPATCH_ROUTE_NONE = 3,    /* nothing: an empty product, or NO_KERNEL */
    SGEMM_DISPATCH_ROUTE_SCALE_C = 4  /* C scaled by beta: nothing for 1, a memset for 0, else the
                                         library's scaling kernel */
} sgemm_dispatch_route_t;

typedef struct sgemm_dispatch_choice {
    sgemm_dispatch_decision_t decision;
    sgemm_dispatch_route_t route;
    char kernel[256]; /* KERNEL and BUILTIN: the kernel as sgemm-db names it ("warptile BM=128 ..."); else "" */
} sgemm_dispatch_choice_t;

/* Fills `options` with the defaults: default database path, device 0, cuBLAS fallback,
   fp32, no miss recording, atomics as tuned. A NULL `options` is passed over. */
void sgemm_dispatch_options_init(sgemm_dispatch_options_t* options);

/* Opens the database to read it (with record_misses, checks that it can be written, and the
   misses are written to it later, as "Misses" says; one of an older schema is read from a
   copy in memory brought to this library's, and the file is left as it is until the first
   write of misses upgrades it), loads every winner of this device and
   of options.precision with its binary (NVRTC compiles only binaries missing from the
   cache), and allocates the per-stream workspaces. The winners' kernels and the built-in
   fallback are loaded into the device's context here, not at their first launch as CUDA's
   lazy loading would: a load may wait for the device's other work, so a first gemm beside a
   kernel that spins on another stream (an all-reduce waiting for its peers) could wait for
   it. cuBLAS (a cuBLAS winner, or the fallback) loads its own kernels at its first call of
   each kind: where that may meet such a kernel, make each shape's first call before it, or
   set CUDA_MODULE_LOADING=EAGER before the process's first CUDA call. cuBLAS's first call in
   a process also does a one-time set-up that waits so, EAGER or not: a create that may use
   cuBLAS makes a 1 x 1 x 1 call itself, so that no gemm meets it. The process's first
   NVRTC compile holds handlers of NVRTC's own for SIGINT, SIGTERM and SIGXFSZ for some tens
   of milliseconds (such a signal then ends the process), and leaves the process's own as
   they were.
   `options` NULL means the defaults. On failure *handle is NULL, the calling thread's
   current CUDA context is the one it had, or none where it had none (the handle's device
   keeps the primary context create started there), and the status says why:
   INVALID_VALUE, DATABASE_ERROR, NO_DEVICE, COMPILE_ERROR, CUDA_ERROR (cuBLAS's handles
   included), HOST_ERROR (no host memory, or no thread), INTERNAL_ERROR. */
sgemm_dispatch_status_t sgemm_dispatch_create(sgemm_dispatch_t* handle, const sgemm_dispatch_options_t* options);

/* Enqueues C = alpha * op(A) * op(B) + beta * C on `stream` (NULL: the legacy default
   stream). Asynchronous; see the contract above. */
sgemm_dispatch_status_t sgemm_dispatch_gemm(sgemm_dispatch_t handle, sgemm_dispatch_op_t trans_a,
                                            sgemm_dispatch_op_t trans_b, int m, int n, int k, float alpha,
                                            const float* a, int lda, const float* b, int ldb, float beta, float* c,
                                            int ldc, struct CUstream_st* stream);

/* Writes into `buffer` (NUL-terminated) which kernel gemm would launch for these arguments,
   and why; pointers are only read for their alignment, and NULL stands for an aligned one.
   `length`, if not NULL, receives the text's full length without the NUL. Returns
   BUFFER_TOO_SMALL when the text was cut. Any other failure (INVALID_HANDLE, say) leaves an
   empty text in `buffer` and 0 in `length`. For arguments gemm's checks refuse, the text names
   the status gemm would return and why, and explain still returns SUCCESS (it did explain):
   sgemm_dispatch_query returns that status. Where nothing can run the shape (NO_KERNEL), the
   text says so and query gives ROUTE_NONE. Enqueues nothing. */
sgemm_dispatch_status_t sgemm_dispatch_explain(sgemm_dispatch_t handle, sgemm_dispatch_op_t trans_a,
                                               sgemm_dispatch_op_t trans_b, int m, int n, int k, const float* a,
                                               int lda, const float* b, int ldb, const float* c, int ldc,
                                               char* buffer, size_t buffer_size, size_t* length);

/* explain's decision as fields, for programs: fills `choice` and returns SUCCESS, or returns
   the status gemm's checks of these arguments would return (leaving `choice` as it was); the
   calling thread's current device is not checked (gemm's WRONG_DEVICE), so any thread may ask.
   Pointers are only read for their alignment, and NULL stands for an aligned one. Taking no
   alpha, query (as explain and prepare) judges the call as one with alpha 1: gemm with
   alpha == 0 reads neither A nor B, so it runs with an A or B that query calls MISALIGNED.
   Enqueues nothing. */
sgemm_dispatch_status_t sgemm_dispatch_query(sgemm_dispatch_t handle, sgemm_dispatch_op_t trans_a,
                                             sgemm_dispatch_op_t trans_b, int m, int n, int k, const float* a, int lda,
                                             const float* b, int ldb, const float* c, int ldc,
                                             sgemm_dispatch_choice_t* choice);

/* Does for these arguments all that gemm does before its launch, and launches nothing: the
   checks (gemm's status for them), the choice of kernel, and the shape key's plan with its
   kernel made ready on the device. The first gemm of the key then does no host work beyond a
   lookup, so a program can prepare its shapes at start-up, before capturing graphs or serving
   its first request. A call with k = 0, or alpha = 0 at any k, and beta other than 0 and 1
   runs the kernel that scales C, which the handle's first such call compiles (about 80 ms of
   NVRTC) and loads: prepare with k = 0 does that ahead. Where NVRTC refuses that kernel
   (COMPILE_ERROR: a GPU it cannot target), the handle keeps the answer, and later such
   calls return it at once. Pointers are only read for their alignment, and NULL stands for an
   aligned one. The calling thread's current device must be the handle's. */
sgemm_dispatch_status_t sgemm_dispatch_prepare(sgemm_dispatch_t handle, sgemm_dispatch_op_t trans_a,
                                               sgemm_dispatch_op_t trans_b, int m, int n, int k, const float* a,
                                               int lda, const float* b, int ldb, const float* c, int ldc);

/* Fills `info` with what create did and what the handle holds now (sgemm_dispatch_info_t);
   INVALID_VALUE for a NULL `info`. Enqueues nothing. */
sgemm_dispatch_status_t sgemm_dispatch_get_info(sgemm_dispatch_t handle, sgemm_dispatch_info_t* info);

/* Gives back the per-stream workspace and cuBLAS handle `stream` holds, so that another
   stream can take them. Call it with no call on `stream` in flight (synchronise it first)
   and no captured graph of its calls still to launch: before destroying the stream, or from
   a thread that used cudaStreamPerThread and is about to end (that thread's stream is
   released). A stream that holds none: SUCCESS, nothing done. Must not race with a gemm on
   the same stream. The calling thread's current device must be the handle's, as for gemm
   (else WRONG_DEVICE): cudaStreamPerThread names another stream on every device. */
sgemm_dispatch_status_t sgemm_dispatch_release_stream(sgemm_dispatch_t handle, struct CUstream_st* stream);

/* Waits for the device, writes pending misses, frees the handle (see "destroy" above for
   its statuses). NULL is a no-op; in a forked child, a handle of the parent's is only marked
   destroyed (see "belongs to the process" above). */
sgemm_dispatch_status_t sgemm_dispatch_destroy(sgemm_dispatch_t handle);

/* "SGEMM_DISPATCH_NO_DEVICE: no CUDA device is visible, or no such ordinal": a status's name
   and meaning; "unknown status" for a value that is none. */
const char* sgemm_dispatch_status_string(sgemm_dispatch_status_t status);

/* Why the last call that failed in this thread failed (or, after explain, the problem it
   found in the arguments); "" when none has. Valid until the thread's next such call. */
const char* sgemm_dispatch_last_error(void);

/* This library's version, "0.4.0": the one its device fingerprint holds, so a database's
   winners serve only the version that tuned them (sgemm-db prune drops the others). */
const char* sgemm_dispatch_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SGEMM_DISPATCH_H */
