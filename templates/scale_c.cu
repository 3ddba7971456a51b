// C = beta * C alone: what libsgemm_dispatch runs for a GEMM that reads neither A nor B, as
// BLAS defines one (K of 0, or alpha of 0), where beta is neither 0 (a memset) nor 1
// (nothing). It is not a GEMM template and is not embedded with them: the families' sources
// hashes, and so every tuned database, stay independent of it (src/dispatch/scale_c.h).
//
// Row-major, as the GEMM: element (i, j) at c[i * ldc + j]. Rows take blockIdx.y and columns
// the threads of blockIdx.x, each striding by its grid's extent, so any M and N (up to
// 2^31 - 1) are covered by a grid within CUDA's limits.
extern "C" __global__ void scale_c(int m, int n, float beta, float* c, int ldc) {
    // 64-bit, as the column: a row index near 2^31 - 1 plus gridDim.y would wrap in 32 bits.
    for (long long row = blockIdx.y; row < m; row += gridDim.y) {
        float* c_row = c + row * ldc;
        for (long long col = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; col < n;
             col += static_cast<long long>(gridDim.x) * blockDim.x)
            c_row[col] *= beta;
    }
}
