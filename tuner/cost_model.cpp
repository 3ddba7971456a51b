#include "tuner/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "templates/sgemm_common.cuh"
#include "templates/sgemm_staging.cuh"
#include "templates/sgemm_warptile_places.cuh"

namespace sgemm {
namespace {

// The fraction of the FFMA peak each family reaches on large problems it suits. Decode's
// is the least its kernels have shown: on the H200 8 rows in 96 blocks of 64 columns ran
// 8x6144x4096 in 0.0327 ms, launch included, where 0.30 rated their compute alone at 0.0324
// (docs/RESULTS.md, thirty-third session).
double reachable_fraction_of_peak(const std::string& family) {
    static const std::map<std::string, double> fraction = {
        {"naive", 0.09}, {"smem", 0.12}, {"blocktile", 0.22}, {"vec4", 0.47},
        {"async", 0.60}, {"warptile", 0.72}, {"decode", 0.33}};
    const auto it = fraction.find(family);
    return it == fraction.end() ? 0.5 : it->second;
}

int param_or(const Family& f, const ParamValues& v, const char* name, int fallback) {
    for (std::size_t i = 0; i < f.params.size(); ++i)
        if (f.params[i].name == name) return v[i];
    return fallback;
}

// The tile of C one block computes (rows, columns); warptile's CT = 1 tiles C^T.
std::pair<int, int> block_tile(const Family& f, const ParamValues& v) {
    const int rows = param_or(f, v, "BM", param_or(f, v, "MT", param_or(f, v, "BLOCK_Y", param_or(f, v, "TILE", 1))));
    const int cols = param_or(f, v, "BN", param_or(f, v, "BLOCK_X", param_or(f, v, "TILE", 1)));
    if (param_or(f, v, "CT", 0)) return {cols, rows};
    return {rows, cols};
}

double ceil_div(double a, double b) { return std::ceil(a / b); }

// Per k a thread reads TM + TN fragment values from shared memory for TM x TN FFMAs, and a
// block copies BM + BN values into it for BM x BN; the smaller those ratios, the more issue
// slots and memory bandwidth the loads take. On the H200 at 4096^3 warptile's 64x128
// blocks of 8x4 thread tiles, 128x128 of 8x8 and 256x128 of 16x8 reached 79%, 87% and
// 93-95% of cuBLAS: about the eighth root of each ratio over the 256x128 / 16x8 one.
// Without this the model saw them as equals on large squares and timed only small tiles,
// 15% slower than the best.
double tile_intensity_efficiency(const Family& f, const ParamValues& v) {
    const double tm = param_or(f, v, "TM", 0), tn = param_or(f, v, "TN", 0);
    const double bm = param_or(f, v, "BM", 0), bn = param_or(f, v, "BN", 0);
    if (tm == 0 || tn == 0 || bm == 0 || bn == 0) return 1.0;
    const double thread_ratio = tm * tn / (tm + tn) / (16.0 * 8.0 / (16.0 + 8.0));
    const double block_ratio = bm * bn / (bm + bn) / (256.0 * 128.0 / (256.0 + 128.0));
    return std::min(1.0, std::pow(thread_ratio, 0.125)) * std::min(1.0, std::pow(block_ratio, 0.125));
}

// Operands that reach shared memory transposed, 4 bytes a copy, cost issue slots and L1
// throughput in proportion to their share of the tile's copies: warptile's A with TA = 0 in
// the tile's A place and B with TB = 1 in its B place (CT = 1 swaps the places). On the
// H200 at 4096^3, the 256x128 tile of 16x8 ran at 98.3% of cuBLAS with no such copies (TN),
// 97.0% with them on its 128 side (TT; NN with CT: 98.2%) and 93.3% on its 256 side (NN);
// 64x256 of 8x16 at 96.5% and, with them on its 64 side, 95.2%: about 6% times the share.
// Without this the model saw NN's tiles of C^T as equal to tiles of C and timed them only
// when refinement happened to step there.
double transposed_copy_efficiency(const Family& f, const ParamValues& v) {
    const int ta = param_or(f, v, "TA", -1), tb = param_or(f, v, "TB", -1), ct = param_or(f, v, "CT", 0);
    const double bm = param_or(f, v, "BM", 0), bn = param_or(f, v, "BN", 0);
    if (ta < 0 || tb < 0 || bm + bn == 0) return 1.0;
    // Which places hold operands stored as rows of x, not of k: the template's own rule.
    // KMAJOR copies B's as stored, but reads it back 4 k at a time; with BK 16 on the H200 that
    // moved NT's batch-32 times by -3% to +5%, so it keeps the charge (what it gains is below).
    const bool a_place = !sgemm_warptile_a_k_rows(ta, tb, ct), b_place = !sgemm_warptile_b_k_rows(ta, tb, ct);
    return 1.0 - 0.06 * (a_place * bm + b_place * bn) / (bm + bn);
}

// B stored as rows of x in warptile's B place (NT's weights) is read BK values of k, BK * 4
// bytes, from each of its rows per tile (in one piece where K fits one tile). Where one row of
// tiles covers M, B streams from DRAM once, in those pieces. On the H200 at batch 32 NT's weights ran
// 15-21% faster in 128-byte pieces (BK 32, KMAJOR) than in 64-byte ones (BK 16): qkv 0.0651
// to 0.0552 ms, gate_up 0.2604 to 0.2158, down 0.1399 to 0.1176, lm_head 1.0773 to 0.8560
// (docs/RESULTS.md, twenty-eighth session), in the loop as much as in the memory system;
// the whole estimate pays. Where rows of tiles share the operand through L2 it was not
// measured, and nothing is charged.
double rows_of_x_stream_efficiency(const Family& f, const ParamValues& v, double M, double K, double tile_rows) {
    const int ta = param_or(f, v, "TA", -1), tb = param_or(f, v, "TB", -1), ct = param_or(f, v, "CT", 0);
    // As tiles of C^T, B's place holds A, which every row of tiles of C^T reads again.
    if (ta < 0 || tb < 0 || ct || sgemm_warptile_b_k_rows(ta, tb, ct) || M > tile_rows) return 1.0;
    const int bk = param_or(f, v, "BK", 0);
    return bk * 4 >= 128 || K <= bk ? 1.0 : 0.85;
}

// Warptile's thread tiles wider than tall (TN > TM) lose to the same tile turned on its side.
// On the H200 at 4096^3 with no transposing copies (TN), 256x128 blocks of 16x8 ran at 98.3%
// of cuBLAS and 128x256 of 8x16 at 96.2%; as TT 101.8% and 97.7%. Without this the model
// ranked the two alike and, its ties broken by the order of the lists, timed 8x16 first on
// large NN squares. The ladder's async rung measured the other way (8x16 best), so only
// warptile pays.
double thread_tile_orientation_efficiency(const Family& f, const ParamValues& v) {
    if (f.name != "warptile") return 1.0;
    return param_or(f, v, "TN", 0) > param_or(f, v, "TM", 0) ? 0.98 : 1.0;
}

// A binary for aligned operands only (Family::required_alignment) issues no 4-byte fallback
// copies of operands stored as rows of k. On the H200 that made 4096^3, 8192^3 and 1024^3's
// best tiles of the time 0.8-1.1% faster (and the tiles the tuner then found 4-8% faster than
// their twins); at batch 32 one tile 2% faster and another 3.7% slower, as ptxas scheduled
// their loops anew. The model ranks such binaries first where the call allows them and the
// loops decide the rating (compute above memory); the walks step to their twins with the
// fallback. Rated by memory traffic, a binary and its twin tie. NT has no operand stored as
// rows of k: there the switch changes only the epilogue, and the model sees no difference, unless B's place
// keeps its rows of x as stored (KMAJOR), copied 16 bytes at a time with the same fallback.
double aligned_operands_efficiency(const Family& f, const ParamValues& v) {
    if (f.required_alignment(v) != 16 && !f.stages_operands(v)) return 1.0;  // staged: the same loop
    const int ta = param_or(f, v, "TA", -1), tb = param_or(f, v, "TB", -1), ct = param_or(f, v, "CT", 0);
    const bool copies_16_bytes = ta < 0 || sgemm_warptile_a_k_rows(ta, tb, ct) || sgemm_warptile_b_k_rows(ta, tb, ct) ||
                                 param_or(f, v, "KMAJOR", 0) == 1;
    return copies_16_bytes ? 1.01 : 1.0;
}

// Groups of warps sharing each k tile (warptile's WK) add warps to hide latency, counted in
// the latency term, but each group meets the block's barrier every BK / WK values of k and
// the groups' partial tiles are summed at the end. On the H200 WK = 2 made blocks of 2
// warps at 4 to 6 warps per SM (batch-32 decode shapes) 10-24% faster, and blocks of 4
// warps at about 12 warps per SM from 4% faster to 22% slower (1024^3): about a fifth of
// the compute rate per doubling, against the latency term's gain.
double warp_group_efficiency(const Family& f, const ParamValues& v) {
    const int groups = param_or(f, v, "WK", 1);
    return std::pow(0.8, std::log2(static_cast<double>(groups)));
}

// Whether `v` launches a stream-K tail for `shape` on `sms` SMs: not where its tiles fill
// whole waves, nor where the tail's count of k iterations would overflow (stream_k_split).
bool launches_stream_k_tail(const Family& f, const ParamValues& v, const ShapeKey& shape, int sms) {
    return f.has_stream_k_tail(v) && sms > 0 && f.stream_k_split(v, shape.M, shape.N, shape.K, sms).tail_blocks > 0;
}

// The waves a launch takes, in units of one block's time per SM: ceil(per_sm) for the busiest
// SM, or where a stream-K tail launches (`tail`; warptile's SK) the whole waves plus the
// tail's share of one, which costs 1.2 times its work: on the H200 the tail ran 2048x2048x4096 (all of it in the
// tail) 10% slower than one wave of whole tiles, and at 4096^3 (3.88 waves) lost 1-2%
// against the part-empty wave, while at 8192^3 (15.5 waves) it gained 1.2%.
double stream_k_waves(bool tail, double per_sm) {
    if (!tail) return std::ceil(per_sm);
    const double whole = std::floor(per_sm);
    return whole + 1.2 * (per_sm - whole);
}

// What a stream-K tail that launches (launches_stream_k_tail) costs beyond its share of a
// wave (stream_k_waves), on its critical
// path: each block of a run's first part ranks every run by its head before it starts, a
// loop of runs x ceil(runs / threads) steps of integer arithmetic per thread (one block per
// SM, so runs is the SM count); and the last block to finish a shared tile then sums the
// tile's parts, whole partial tiles, one after another, at about 60 GB/s as split-K's
// in-kernel finish does (below). On an H100 (132 SMs, as the H200) one-warp blocks of 32x64
// tiles took 38-42 us with a tail at 7x17x1000 (one tile in 32 or 63 parts) and 64x64x4096
// (two tiles in 64 parts each), where the same tiles split in 16 took 12-21 us; without these
// terms the tail of 7x17x1000 TT rated 7.6 us and filled the model's first picks there
// (docs/RESULTS.md, eighty-eighth session). The step's 45 ns is fitted to that one time (660
// steps in a one-warp block; the kernel was not profiled to isolate them): blocks of 256
// threads rank in 132 steps, about 6 us, small beside the milliseconds of the shapes whose
// tails the waves' term was measured on.
double stream_k_tail_seconds(const Family& f, const ParamValues& v, const ShapeKey& shape, double tiles, int sms,
                             int threads, int tile_rows, int tile_cols) {
    const double shared = std::fmod(tiles, sms);  // the tiles past the whole waves (stream_k_split)
    const double rank = sms * ceil_div(sms, threads) * 45e-9;
    const double k_tiles = ceil_div(shape.K, param_or(f, v, "BK", 1));
    const double run = ceil_div(shared * k_tiles, sms);
    const double parts = std::min(k_tiles, ceil_div(k_tiles, run) + 1);
    return rank + parts * 4.0 * tile_rows * tile_cols / 60e9;
}

// The share of the memory system's rate a streaming family (decode: UNROLL batches of B
// per thread) gets from its grid. Its blocks that are resident at once stream together, so
// only the rounds past the first count, as waves do for compute; and where the grid leaves
// SMs idle, bytes in flight elsewhere still keep DRAM busy, down to 64 of the H200's 132
// SMs: there 64 blocks on 64 SMs streamed 1x4096x4096's weights at 3.6 TB/s in their loop,
// as fast as cuBLAS's full grid, and 96 blocks of 8 rows owning all of K ran 8x6144x4096 in
// 0.0327 ms, ahead of every grid that filled the SMs (docs/RESULTS.md, thirty-third
// session). Charged the compute waves' 96 / 132, those blocks ranked 3777th of 13,496 there.
double streaming_wave_efficiency(double blocks, int blocks_per_sm, int sm_count) {
    const double rounds = blocks / (static_cast<double>(blocks_per_sm) * sm_count);
    const double tail = rounds <= 1 ? 1.0 : rounds / std::ceil(rounds);
    const double busy_sms = std::min(blocks, static_cast<double>(sm_count));
    return tail * std::min(1.0, busy_sms / (64.0 / 132.0 * sm_count));
}

// The warps per SM that keep the FMA pipes fed. A thread tile of TM x TN has that many
// independent FFMAs per k, so tiles of 64 or more need 8 warps and smaller ones more: on the
// H200, 256x128 blocks of 16x8 reach 74% of the FFMA peak with 8 warps; at 1024^3 64x128
// blocks of 8x8 ran 12% faster with 8 warps per SM than with 4 (two groups of warps along
// k, which cost some of that) but no faster with 12 (3 slices), and 16x8 tiles with 4 warps
// per SM ran 7-10% behind them. Families without a thread tile (decode streams B; its warps
// keep loads in flight) need 16, and so do the ladder's small tiles (at most 16 as before:
// none were measured against warps per SM).
double warps_to_hide_latency(const Family& f, const ParamValues& v) {
    const int tm = param_or(f, v, "TM", 0), tn = param_or(f, v, "TN", 0);
    if (tm == 0 || tn == 0) return 16.0;
    return std::clamp(512.0 / (tm * tn), 8.0, 16.0);
}

}  // namespace

CostEstimate estimate_cost(const Candidate& c, const ShapeKey& shape, const DeviceModel& device, const PtxasInfo* ptxas) {
    const Family& f = *c.family;
    const double M = shape.M, N = shape.N, K = shape.K;
    const LaunchGeometry g = f.geometry(c.values, shape.M, shape.N, shape.K);
    const double blocks = static_cast<double>(g.blocks());
    const int threads = static_cast<int>(g.block.x * g.block.y * g.block.z);
    const int splits = param_or(f, c.values, "SPLITS", 1);

    CostEstimate e;
    const ArchLimits& lim = device.limits;
    // Before ptxas has run, the family's own estimate: with a flat 128, blocks of 256 threads
    // of 16x8 tiles (ptxas: 222-250 registers, one block per SM) counted as two per SM, and
    // the latency term then favoured splitting their few tiles over 8 slices at 1024^3, 20%
    // slower on the H200 than 4 slices.
    const int registers = ptxas && ptxas->found ? std::max(ptxas->registers, 16)
                          : f.estimated_registers ? f.estimated_registers(c.values)
                                                  : 128;
    const int per_thread_regs = (registers + 7) / 8 * 8;  // allocated in units of 8
    const int shared = static_cast<int>(g.dynamic_shared_bytes) + (ptxas ? ptxas->shared_bytes : 0) + 1024;
    e.blocks_per_sm = std::min({lim.max_threads_per_sm / threads, lim.registers_per_sm / (per_thread_regs * threads),
                                lim.shared_per_sm / shared, 32});
    if (e.blocks_per_sm < 1) {
        e.seconds = std::numeric_limits<double>::infinity();
        return e;
    }
    // The busiest SM holds ceil(blocks / SMs) blocks; the average is blocks / SMs.
    const double per_sm = blocks / device.sm_count;
    const bool tail = launches_stream_k_tail(f, c.values, shape, device.sm_count);
    e.wave_efficiency = per_sm / stream_k_waves(tail, per_sm);
    // Few warps per SM hide latency poorly.
    const double warps = std::min(per_sm, static_cast<double>(e.blocks_per_sm)) * threads / 32.0;
    const double latency_hiding = std::min(1.0, std::sqrt(warps / warps_to_hide_latency(f, c.values)));

    const auto [tile_rows, tile_cols] = block_tile(f, c.values);
    // Staged (warptile's ALIGNED = 2), the main kernel's tiles cover N - N mod 4 columns.
    // Below N = 4 they cover none: the model has no grid to rate, and the tuner offers no
    // such candidate (enumerate_candidates).
    const bool staged = f.stages_operands(c.values);
    const double tiled_N = staged ? sgemm_staged_n(shape.N) : N;
    if (tiled_N == 0) {
        e.seconds = std::numeric_limits<double>::infinity();
        return e;
    }
    e.tile_efficiency = (M * tiled_N) / (ceil_div(M, tile_rows) * tile_rows * ceil_div(tiled_N, tile_cols) * tile_cols);

    const double flops = 2.0 * M * N * K;
    e.compute_seconds = flops / (device.fp32_flops * reachable_fraction_of_peak(f.name) *
                                 tile_intensity_efficiency(f, c.values) * warp_group_efficiency(f, c.values) *
                                 transposed_copy_efficiency(f, c.values) *
                                 thread_tile_orientation_efficiency(f, c.values) *
                                 aligned_operands_efficiency(f, c.values) * e.tile_efficiency *
                                 e.wave_efficiency * latency_hiding);
    // Operands once, C written once (and read when beta != 0, taken as the usual case in
    // inference: beta = 0), re-reads of operand strips of which about a tenth miss L2, and
    // the split-K partials written and read back (slices that add into C with atomics store
    // none: their adds meet in L2, costed as the finish below; slices that take turns on C
    // read and write C instead).
    const double rereads = M * K * (ceil_div(N, tile_cols) - 1) + K * N * (ceil_div(M, tile_rows) - 1);
    double bytes = 4.0 * (M * K + K * N + M * N) + 4.0 * 0.1 * rereads;
    if (splits > 1 && f.sums_in_order(c.values))
        bytes += 8.0 * (splits - 1) * M * N;  // each later slice reads C back and writes it
    else if (splits > 1 && !f.sums_with_atomics(c.values))
        bytes += 8.0 * splits * M * N;
    // Memory throughput needs bytes in flight: about 40 KB per SM on Hopper (bandwidth times
    // latency over the SMs). A streaming family says how many it keeps: batches of UNROLL
    // 64-byte quads per thread, two (decode loads the next batch before it computes on the
    // current one) or, with a ring of them in shared memory, all but the one computed on;
    // for the tiled families occupancy stands in for it.
    const int unroll = param_or(f, c.values, "UNROLL", 0), ring = param_or(f, c.values, "RING", 0);
    const double batches = ring > 0 ? ring - 1 : 2;
    const double in_flight =
        unroll > 0 ? std::min(per_sm, static_cast<double>(e.blocks_per_sm)) * threads * unroll * 64.0 * batches : 0;
    const double streaming = unroll > 0 ? std::min(1.0, in_flight / 40e3) : latency_hiding;
    // Decode reading B stored N x K puts min(KW, 8) lanes side by side along k: with fewer
    // than 8 a warp's load covers half lines or less. A pure stream of such weights on the
    // H200 ran 5-14% slower with 4 lanes than with 8 (docs/RESULTS.md, twenty-fifth session).
    const bool part_lines = param_or(f, c.values, "TB", 0) == 1 && param_or(f, c.values, "KW", 8) < 8;
    const double memory_waves =
        unroll > 0 ? streaming_wave_efficiency(blocks, e.blocks_per_sm, device.sm_count) : e.wave_efficiency;
    e.memory_seconds = bytes / (device.bytes_per_s * 0.85 * memory_waves * streaming * (part_lines ? 0.9 : 1.0));
    const double launch = 3e-6 + (splits > 1 ? 2e-6 : 0.0);
    // The staging kernel: where the key's class is below 16 each staged operand is taken to
    // be copied (read and written), and C's last N mod 4 columns read A once, at the memory
    // rate, after a launch of its own. On the H200 at 4095x4097x4093 the copy of B cost
    // nothing overall: with B's rows aligned (not copied) the same binary took 2.92 ms, with
    // them copied 2.85, the main kernel finding much of the copy in L2. So the rating is
    // pessimistic there: a staged twin must win by its loop and its tiles.
    if (staged) {
        const int ta = param_or(f, c.values, "TA", 0), tb = param_or(f, c.values, "TB", 0);
        const int ct = param_or(f, c.values, "CT", 0), kmajor = param_or(f, c.values, "KMAJOR", 0);
        const double copied = shape.alignment < 16 ? static_cast<double>(sgemm_staged_workspace_bytes(
                                                         ta, tb, ct, kmajor, shape.M, shape.N, shape.K) -
                                                     SGEMM_WORKSPACE_COUNTER_BYTES)
                                                   : 0.0;
        const double fringe = shape.N % 4 ? 4.0 * M * K : 0.0;
        e.staging_seconds = 2e-6 + (2.0 * copied + fringe) / (device.bytes_per_s * 0.85);
    }
    // Split-K's finish: the last block of each tile to count in reads the tile's partials of
    // every slice back (the part of the tile inside C; the rest costs no loads) and sums
    // them, and the last tile's sum ends the launch. One block reads at about 60 GB/s: on
    // the H200, per-block timelines ("Ninth session" in docs/RESULTS.md) showed warptile's
    // 256x128 tiles of 4 slices (512 KB) summed in 8.8 us and 32x128 tiles of 8 slices (128
    // KB) in 2.8 us; decode's element-wise sum, 8x256 tiles of 8 slices (64 KB), in 1.5 us.
    // Without this the model ranked 256x128 tiles in 8 slices first at 1024^3, which ran
    // 20% slower than in 4.
    // A sum pass (warptile's SUM_PASS) reads every slice of C at once across the GPU after a
    // kernel boundary of about 1 us. On the H200 a prototype's pass cost 2.2-2.6 us after
    // 32x4096x4096's and 32x6144x4096's split kernels (4-6 MB of partials; the in-kernel
    // finish 3.5-3.9 us), and the product pass saved 9 us of 1024^3's 256x128 tiles in 4
    // slices (16 MB; in-kernel the finishing block sums 512 KB in 9-14 us): about 2.5 TB/s
    // over the partials. Rated faster, 256x128 tiles in 4 slices filled the model's first
    // picks at 1024^3, where they ran 0.0669 ms against 0.0551 for 64x128 tiles in 3.
    // Slices that add into C with atomics (SUM_PASS = 2) end with each block's own adds, no
    // sum after the loops: on the H200 the same tiles ran 2-4 us under the pass at batch 32
    // in 16 slices (rated 4.4-5.7 us here) and 0.8 us at 1024^3 in 3: rated here at twice the
    // pass's rate over the slices (half its cost), without its kernel boundary.
    // Slices that take turns on C (SUM_PASS = 3) queue: on the H200 each turn took about 3 us
    // where all of a tile's slices ran side by side (32x4096x4096 in 8 and 16 slices, one
    // wave). Where the grid comes in several rounds of resident blocks, the slices of a tile
    // run in different rounds and other blocks' loops cover the turns; only the last round's
    // queue shows. Either way each later slice moves its tile of C through L2 once, as an
    // atomic slice's adds do, and this finish rates that the same (32x128256x4096 in 6
    // slices, about 4 rounds, ran 1% under the atomics); the reads and writes of C count as
    // memory above too. Without the finish's second term 12 slices led the ranking at 4096^3.
    const double rounds = std::max(1.0, blocks / (static_cast<double>(e.blocks_per_sm) * device.sm_count));
    if (splits > 1)
        e.finish_seconds = f.has_sum_pass(c.values)        ? 1e-6 + splits * 4.0 * M * N / 2.5e12
                           : f.sums_with_atomics(c.values) ? splits * 4.0 * M * N / 5e12
                           : f.sums_in_order(c.values)
                               ? std::max((splits - 1) * 3e-6 / rounds, (splits - 1) * 4.0 * M * N / 5e12)
                               : splits * 4.0 * std::min<double>(tile_rows, M) * std::min<double>(tile_cols, N) / 60e9;
    if (tail)
        e.finish_seconds +=
            stream_k_tail_seconds(f, c.values, shape, blocks, device.sm_count, threads, tile_rows, tile_cols);
    // Padding on the edges costs registers and issue slots even where memory hides it: a
    // small tie-breaker towards tiles that fit the shape.
    e.seconds = (std::max(e.compute_seconds, e.memory_seconds) / rows_of_x_stream_efficiency(f, c.values, M, K, tile_rows) +
                 launch + e.finish_seconds + e.staging_seconds) *
                (1.0 + 0.05 * (1.0 - e.tile_efficiency));
    return e;
}

bool same_output_tiling(const Candidate& a, const Candidate& b) {
    return param_or(*a.family, a.values, "CT", 0) == param_or(*b.family, b.values, "CT", 0);
}

std::vector<Candidate> rank_by_cost(std::vector<Candidate> candidates, const ShapeKey& shape, const DeviceModel& device) {
    std::vector<std::pair<double, std::size_t>> order;
    for (std::size_t i = 0; i < candidates.size(); ++i)
        order.emplace_back(estimate_cost(candidates[i], shape, device).seconds, i);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Candidate> ranked;
    for (const auto& [cost, i] : order) ranked.push_back(candidates[i]);
    return ranked;
}

}  // namespace sgemm
