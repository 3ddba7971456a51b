/* dispatch.h is C99: compiled with -std=c99 -pedantic -Wall -Wextra -Werror by the test
   "dispatch.h compiles as C99", which only compiles it. Every type and function is used. */
#include <stddef.h>
#include <stdio.h>

/* A program's own one-letter macros, defined before the header, meet none of its names (its
   parameters are m, n, k, a, b and c): each would be a syntax error there. */
#define M )
#define N )
#define K )
#define A )
#define B )
#define C )
#include <sgemm/dispatch.h>
#undef M
#undef N
#undef K
#undef A
#undef B
#undef C

int c99_use_every_declaration(struct CUstream_st* stream, const float* A, const float* B, float* C) {
    sgemm_dispatch_options_t options;
    sgemm_dispatch_info_t info;
    sgemm_dispatch_t handle = NULL;
    sgemm_dispatch_status_t status;
    char text[512];
    size_t length = 0;

    sgemm_dispatch_options_init(&options);
    options.fallback = SGEMM_DISPATCH_FALLBACK_BUILTIN;
    options.precision = SGEMM_DISPATCH_TF32;
    options.deterministic = 1;
    status = sgemm_dispatch_create(&handle, &options);
    if (status != SGEMM_DISPATCH_SUCCESS) {
        fprintf(stderr, "%s: %s\n", sgemm_dispatch_status_string(status), sgemm_dispatch_last_error());
        return 1;
    }
    status = sgemm_dispatch_gemm(handle, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_T, 8, 64, 32, 1.0f, A, 32, B, 32, 0.0f,
                                 C, 64, stream);
    status = sgemm_dispatch_explain(handle, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 8, 64, 32, NULL, 32, NULL, 64, NULL,
                                    64, text, sizeof text, &length);
    status = sgemm_dispatch_get_info(handle, &info);
    status = sgemm_dispatch_prepare(handle, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 8, 64, 32, NULL, 32, NULL, 64, NULL,
                                    64);
    status = sgemm_dispatch_release_stream(handle, stream);
    {
        sgemm_dispatch_choice_t choice;
        status = sgemm_dispatch_query(handle, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 8, 64, 32, NULL, 32, NULL, 64,
                                      NULL, 64, &choice);
        printf("%d %d %s\n", (int)(choice.decision == SGEMM_DISPATCH_DECISION_EXACT),
               (int)(choice.route == SGEMM_DISPATCH_ROUTE_KERNEL), choice.kernel);
    }
    printf("%s %d %zu %s\n", text, info.winners, length, sgemm_dispatch_version());
    return sgemm_dispatch_destroy(handle) == SGEMM_DISPATCH_SUCCESS ? (int)status : 1;
}
