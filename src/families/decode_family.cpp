#include "src/families/decode_family.h"

#include <algorithm>
#include <climits>

#include "src/util/text.h"
#include "templates/sgemm_common.cuh"

namespace sgemm {
namespace {

struct DecodeShape {
    int mt, bn, kw, unroll, tb, splits, ring, sum_pass;
    int threads() const { return bn / 4 * kw; }
    // Loaded values of B a thread holds in registers: two batches of UNROLL quads of 16, or
    // with a ring in shared memory the one it computes on.
    int loaded_values() const { return (ring > 0 ? 1 : 2) * 16 * unroll; }
    // The ring's floats in shared memory, after A's slice.
    int ring_floats() const { return ring * unroll * 16 * threads(); }
    // Accumulators, the batches of B in registers, and about 40 for addresses and loop
    // state. Within 15 of ptxas (CUDA 13.0, sm_90) for up to 8 rows, the binaries whose
    // blocks can be large; more rows need more (225 for 16 rows with UNROLL 2). With TB,
    // whose loads follow four rows of B, ptxas took up to 50 more for up to 8 rows and 86
    // for 16, yet spilled none the constraints below let through (sm_80 and sm_90): an
    // estimate that counted them would only refuse binaries that run.
    int estimated_registers() const { return 4 * mt + loaded_values() + 40; }
};

DecodeShape decode_shape(const Family& f, const ParamValues& v) {
    return {f.value(v, "MT"), f.value(v, "BN"),     f.value(v, "KW"),  f.value(v, "UNROLL"),
            f.value(v, "TB"), f.value(v, "SPLITS"), f.value(v, "RING"), f.value(v, "SUM_PASS")};
}

// Split-K blocks of 8 rows that ptxas (CUDA 13.0) spills for sm_75 and sm_80 and for no other
// target (sm_86 to sm_100 compile them cleanly; docs/RESULTS.md, fifteenth, eighteenth and
// twenty-fourth sessions): one-warp blocks with UNROLL 2 (held to 128 registers: 16 bytes
// stored, 24 loaded), and with TB, blocks of 2 groups along k with UNROLL 1 and 128 or 256
// columns (held to 96: 4 bytes each way). They are the only binaries of the space that spill.
bool spills_on_sm75_and_sm80(const DecodeShape& d) {
    if (d.mt != 8 || d.splits == 1) return false;
    if (d.threads() == 32 && d.unroll == 2) return true;
    return d.tb && d.kw == 2 && d.unroll == 1 && d.bn >= 128;
}

// As in the template: the slice of k per split rounded up to a multiple of 4; shared memory
// holds the slice of A and the ring of B, later reused for the reduction across the KW groups.
long long k_span(int K, int splits) { return (tiles_along(K, splits) + 3) & ~3ll; }

// In 64 bits, saturated at what the launch's unsigned holds: at K in the tens of millions the
// slice of A passes 2^31 bytes, which in int arithmetic wrapped to a size (0, or a few KB) that
// passed the shared-memory check, and the kernel wrote A's slice far past its allocation.
unsigned shared_bytes(const DecodeShape& d, int K) {
    const long long rows_per_pass = std::min(d.mt, 4);
    const long long floats = std::max(d.mt * k_span(K, d.splits) + d.ring_floats(), d.kw * rows_per_pass * d.bn);
    return static_cast<unsigned>(std::min<long long>(4 * floats, UINT_MAX));
}

}  // namespace

Family decode_family() {
    Family f;
    f.name = "decode";
    f.host_source = base_name(__FILE__);
    f.summary = "skinny M (decode batches): streams B (K x N or N x K) once with 16-byte loads, split-K across warps and "
                "blocks (summed in-kernel or by a second pass)";
    f.template_file = "sgemm_decode.cuh";
    f.kernel = "sgemm_decode";
    f.sum_pass_kernel = "sgemm_decode_sum_pass";
    // BN = 32 and KW = 32, 64: blocks of narrow column strips with many groups along k own all
    // of K, with no split-K tail. On the H200 a 32-column strip streams as fast as a
    // 256-column one split 8 ways (4096 x 4096: 22.5 against 22.2 us), and such blocks made
    // 1x and 8x4096x4096 5-10% faster than the best split configurations.
    f.params = {{"MT", {1, 2, 4, 8, 16, 32}},
                {"BN", {32, 64, 128, 256}},
                {"KW", {1, 2, 4, 8, 16, 32, 64}},
                {"UNROLL", {1, 2, 4}},
                {"EF", {1, 0}},  // evict-first loads of B; first, so the tuner times it first
                {"TB", {0, 1}},  // B stored N x K: the weights out x in, an NT GEMM
                {"SPLITS", {1, 2, 3, 4, 6, 8, 12, 16, 24, 32}, /*split_count=*/true},
                // B's batches in a ring of this many in shared memory (0: two sets of registers)
                {"RING", {0, 3, 6}},
                // the slices summed by a second kernel rather than the last block of each tile
                {"SUM_PASS", {0, 1}, /*split_count=*/false, /*stream_k=*/false, /*k_groups=*/false,
                 /*aligned_only=*/false, /*sum_pass=*/true}};
    f.defaults = {8, 128, 8, 4, 1, 0, 4, 0, 0};
    f.constraint_violation = [f](const ParamValues& v, const ArchLimits& lim) -> std::string {
        const DecodeShape d = decode_shape(f, v);
        if (d.threads() < 32 || d.threads() > lim.max_threads_per_block || d.threads() % 32)
            return "BN/4*KW = " + std::to_string(d.threads()) + " threads; it must be a whole number of warps, at most " +
                   std::to_string(lim.max_threads_per_block);
        // A 32-column strip (128 bytes a row) streams at full speed only with many loads in
        // flight per block. On the H200 a pure stream of 4096 x 4096 in such strips took
        // 26.3 us with KW = 32 and UNROLL 2, 22.5 us with KW = 64; the tuned batch-1 o kernel
        // has KW = 16 with UNROLL 4. Below 16 groups a block is one or two warps, and with 8
        // rows and UNROLL 2 ptxas (CUDA 13.0) spilled such blocks on sm_80 and sm_90.
        if (d.bn == 32 && d.kw < 16)
            return "BN=32 columns stream well only with KW >= 16 groups along k";
        // ptxas (CUDA 13.0) spills 16 rows with UNROLL 4 and 32 rows with UNROLL 2 (192 here).
        if (d.mt * 4 + d.loaded_values() > 160)
            return "MT*4 accumulators and the batches of UNROLL*16 loaded values in registers need more than 160";
        // The ring is filled by cp.async (sm_80+). It serves B both ways: with TB the kernel
        // gained 6-8% on the H200. Stored K x N it gained nothing at 8x28672x4096 (0.1228
        // against 0.1206 ms), but where few blocks stream B, as 8 rows owning 64-column
        // strips with 32 groups along k, it keeps two batches in flight beside the 32
        // accumulators where registers keep one: 8x6144x4096 in 0.0327 ms against 0.0355 for
        // the best without a ring, 8x4096x4096 0.0232 against 0.0248 (docs/RESULTS.md,
        // thirty-third session).
        if (d.ring > 0 && lim.sm < 80) return "RING needs cp.async (sm_80 or newer)";
        // ptxas (CUDA 13.0, sm_90) spilled ring binaries of 16 rows with UNROLL 2 (at 168
        // registers) and most of 32 rows; batches of 16 or 32 rows are compute-bound anyway.
        if (d.ring > 0 && d.mt > 8) return "RING serves blocks of up to 8 rows";
        // Of the 2,440 ring binaries with TB left for sm_80 and sm_90, ptxas spilled 11, all
        // with UNROLL 4 or with 1 or 2 groups along k (whose lanes read a quarter of a line of
        // B or less per load); the ring keeps bytes in flight without a large UNROLL. The
        // 1,860 without TB that these rules leave compile without a spill (116 registers at
        // most, CUDA 13.0).
        if (d.ring > 0 && (d.unroll > 2 || d.kw < 4)) return "RING needs UNROLL <= 2 and KW >= 4";
        if (4 * d.ring_floats() >= lim.max_shared_per_block)
            return "a ring of RING*UNROLL quads a thread leaves no shared memory for A";
        if (d.sum_pass && (d.splits == 1 || d.splits > SGEMM_SUM_PASS_MAX_SLICES))
            return "SUM_PASS = 1 sums the slices of a split launch in a second kernel: it goes with SPLITS from 2 to " +
                   std::to_string(SGEMM_SUM_PASS_MAX_SLICES);
        if ((lim.sm == 75 || lim.sm == 80) && spills_on_sm75_and_sm80(d))
            return "these split-K blocks of 8 rows spill on sm_75 and sm_80";
        // The launch bounds let ptxas give a block of T threads at most 65536 / T registers
        // each; past that it spills (all 1024-thread blocks did, and 512-thread blocks with
        // UNROLL 4).
        const int registers = d.estimated_registers();
        if (registers > lim.max_registers_per_thread || d.threads() * registers > lim.registers_per_sm)
            return std::to_string(d.threads()) + " threads of about " + std::to_string(registers) +
                   " registers each do not fit one SM without spilling";
        return "";
    };
    f.estimated_registers = [f](const ParamValues& v) { return decode_shape(f, v).estimated_registers(); };
    f.geometry = [f](const ParamValues& v, int M, int N, int K) {
        const DecodeShape d = decode_shape(f, v);
        return LaunchGeometry{dim3(grid_blocks(tiles_along(M, d.mt)), d.splits, grid_blocks(tiles_along(N, d.bn))),
                              dim3(d.threads()),
                              shared_bytes(d, K)};
    };
    f.workspace = [f](const ParamValues& v, int M, int N, int, int, int) -> std::size_t {
        return sgemm_splitk_workspace_bytes(decode_shape(f, v).splits, M, N);
    };
    f.records_timeline = true;
    return f;
}

}  // namespace sgemm
