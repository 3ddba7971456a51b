// The five rungs of the teaching ladder as families: their parameter spaces, the
// constraints each template relies on, and how they are launched.
#include "src/families/ladder_families.h"

#include "src/util/text.h"

namespace sgemm {
namespace {

// Shared by every rung from 3 on: a block computes BM x BN of C with (BM/TM)*(BN/TN)
// threads; the grid covers N along x (up to 2^31 blocks) and M along y.
struct TileShape {
    int bm, bn, bk, tm, tn;
    int threads() const { return (bm / tm) * (bn / tn); }
};

TileShape tile_shape(const Family& f, const ParamValues& v) {
    return {f.value(v, "BM"), f.value(v, "BN"), f.value(v, "BK"), f.value(v, "TM"), f.value(v, "TN")};
}

std::vector<ParamSpec> tile_params(std::vector<int> bk_values, std::vector<int> thread_tile_values) {
    return {{"BM", {32, 64, 128, 256}},
            {"BN", {32, 64, 128, 256}},
            {"BK", std::move(bk_values)},
            {"TM", thread_tile_values},
            {"TN", thread_tile_values}};
}

// The checks every tile rung needs; `vector_width` is 4 for the float4 rungs, else 1.
std::string tile_violation(const TileShape& t, int vector_width, int shared_bytes, const ArchLimits& lim) {
    if (t.bm % t.tm || t.bn % t.tn) return "BM must be a multiple of TM and BN of TN";
    const int threads = t.threads();
    if (threads < 32 || threads > lim.max_threads_per_block || threads % 32)
        return "a block would have " + std::to_string(threads) +
               " threads; it needs a whole number of warps, at most " +
               std::to_string(lim.max_threads_per_block);
    if (t.tm * t.tn > 128)
        return "a " + std::to_string(t.tm) + "x" + std::to_string(t.tn) +
               " thread tile needs more than 128 accumulator registers";
    if (vector_width > 1 && (t.tm % vector_width || t.tn % vector_width || t.bk % vector_width))
        return "TM, TN and BK must be multiples of 4 for 128-bit accesses";
    if (shared_bytes > lim.static_shared_per_block)
        return "needs " + std::to_string(shared_bytes) + " bytes of static shared memory; the limit is " +
               std::to_string(lim.static_shared_per_block);
    return "";
}

LaunchGeometry tile_geometry(const TileShape& t, int M, int N) {
    return {dim3(grid_blocks(tiles_along(N, t.bn)), grid_blocks(tiles_along(M, t.bm))), dim3(t.threads()), 0};
}

Family naive_family() {
    Family f;
    f.name = "naive";
    f.host_source = base_name(__FILE__);
    f.summary = "rung 1: one thread per element of C, operands straight from global memory";
    f.template_file = "sgemm_naive.cuh";
    f.kernel = "sgemm_naive";
    f.params = {{"BLOCK_X", {8, 16, 32, 64}}, {"BLOCK_Y", {1, 2, 4, 8, 16, 32}}};
    f.defaults = {32, 8};
    f.constraint_violation = [](const ParamValues& v, const ArchLimits& lim) -> std::string {
        const int threads = v[0] * v[1];
        if (threads < 32 || threads > lim.max_threads_per_block)
            return "BLOCK_X*BLOCK_Y = " + std::to_string(threads) + " threads; it must be 32 to " +
                   std::to_string(lim.max_threads_per_block);
        return "";
    };
    f.geometry = [](const ParamValues& v, int M, int N, int) {
        return LaunchGeometry{dim3(grid_blocks(tiles_along(N, v[0])), grid_blocks(tiles_along(M, v[1]))),
                              dim3(v[0], v[1]), 0};
    };
    return f;
}

Family smem_family() {
    Family f;
    f.name = "smem";
    f.host_source = base_name(__FILE__);
    f.summary = "rung 2: TILE x TILE tiles of A and B staged in shared memory";
    f.template_file = "sgemm_smem.cuh";
    f.kernel = "sgemm_smem";
    f.params = {{"TILE", {8, 16, 32}}};
    f.defaults = {32};
    f.constraint_violation = [](const ParamValues& v, const ArchLimits& lim) -> std::string {
        if (v[0] * v[0] > lim.max_threads_per_block) return "TILE*TILE exceeds the threads per block";
        return "";
    };
    f.geometry = [](const ParamValues& v, int M, int N, int) {
        return LaunchGeometry{dim3(grid_blocks(tiles_along(N, v[0])), grid_blocks(tiles_along(M, v[0]))),
                              dim3(v[0] * v[0]), 0};
    };
    return f;
}

Family blocktile_family() {
    Family f;
    f.name = "blocktile";
    f.host_source = base_name(__FILE__);
    f.summary = "rung 3: BM x BN block tile, TM x TN register tile per thread";
    f.template_file = "sgemm_blocktile.cuh";
    f.kernel = "sgemm_blocktile";
    f.params = tile_params({8, 16, 32}, {2, 4, 8, 16});
    f.defaults = {128, 128, 8, 8, 8};
    f.constraint_violation = [f](const ParamValues& v, const ArchLimits& lim) {
        const TileShape t = tile_shape(f, v);
        return tile_violation(t, 1, 4 * (t.bm * t.bk + t.bk * t.bn), lim);
    };
    f.geometry = [f](const ParamValues& v, int M, int N, int) { return tile_geometry(tile_shape(f, v), M, N); };
    return f;
}

// Rungs 4 and 5 split each tile load evenly over the threads (unrolled loops with no
// remainder), which needs the vector counts to be multiples of the thread count.
std::string even_split_violation(const TileShape& t, int a_elements_per_op) {
    if ((t.bm * t.bk / a_elements_per_op) % t.threads() || (t.bk * t.bn / 4) % t.threads())
        return "the A and B tiles must split evenly over the " + std::to_string(t.threads()) + " threads";
    return "";
}

Family vec4_family() {
    Family f;
    f.name = "vec4";
    f.host_source = base_name(__FILE__);
    f.summary = "rung 4: 128-bit global and shared loads, A transposed in shared memory";
    f.template_file = "sgemm_vec4.cuh";
    f.kernel = "sgemm_vec4";
    f.params = tile_params({4, 8, 16, 32}, {4, 8, 16});
    f.defaults = {128, 128, 8, 8, 8};
    f.constraint_violation = [f](const ParamValues& v, const ArchLimits& lim) {
        const TileShape t = tile_shape(f, v);
        std::string why = tile_violation(t, 4, 4 * (t.bk * t.bm + t.bk * t.bn), lim);
        return why.empty() ? even_split_violation(t, 4) : why;
    };
    f.geometry = [f](const ParamValues& v, int M, int N, int) { return tile_geometry(tile_shape(f, v), M, N); };
    return f;
}

Family async_family() {
    Family f;
    f.name = "async";
    f.host_source = base_name(__FILE__);
    f.summary = "rung 5: cp.async copies into a double-buffered shared-memory pipeline";
    f.template_file = "sgemm_async.cuh";
    f.kernel = "sgemm_async";
    f.params = tile_params({4, 8, 16, 32}, {4, 8, 16});
    // Measured on the H200 at 4096^3 (docs/RESULTS.md): 128x256 with 8x16 per thread is
    // the fastest of the configurations tried, 79% of cuBLAS against 67% for 128x128.
    f.defaults = {128, 256, 8, 8, 16};
    f.min_sm = 80;  // cp.async
    f.constraint_violation = [f](const ParamValues& v, const ArchLimits& lim) {
        const TileShape t = tile_shape(f, v);
        const int a_pad = 4;  // as A_PAD in the template
        std::string why = tile_violation(t, 4, 2 * 4 * (t.bk * (t.bm + a_pad) + t.bk * t.bn), lim);
        return why.empty() ? even_split_violation(t, 1) : why;
    };
    f.geometry = [f](const ParamValues& v, int M, int N, int) { return tile_geometry(tile_shape(f, v), M, N); };
    return f;
}

}  // namespace

std::vector<Family> ladder_families() {
    return {naive_family(), smem_family(), blocktile_family(), vec4_family(), async_family()};
}

}  // namespace sgemm
