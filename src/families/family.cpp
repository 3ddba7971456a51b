#include "src/families/family.h"

#include <algorithm>
#include <climits>

#include "src/util/error.h"
#include "templates/sgemm_common.cuh"
#include "templates/sgemm_staging.cuh"

namespace sgemm {

std::size_t Family::param_index(const std::string& param) const {
    for (std::size_t i = 0; i < params.size(); ++i)
        if (params[i].name == param) return i;
    throw Error("family " + name + " has no parameter " + param);
}

int Family::value(const ParamValues& values, const std::string& param) const {
    const std::size_t i = param_index(param);
    if (i >= values.size())
        throw Error("family " + name + " takes " + std::to_string(params.size()) + " parameters, got " +
                    std::to_string(values.size()));
    return values[i];
}

std::string Family::name_expression(const ParamValues& values) const {
    std::string args;
    for (std::size_t i = 0; i < values.size() && i < params.size(); ++i) {
        if (params[i].stream_k) continue;
        const std::string arg = params[i].split_count ? (values[i] > 1 ? "true" : "false") : std::to_string(values[i]);
        args += (args.empty() ? "" : ", ") + arg;
    }
    return kernel + "<" + args + ">";
}

bool Family::has_stream_k_tail(const ParamValues& values) const {
    for (std::size_t i = 0; i < params.size() && i < values.size(); ++i)
        if (params[i].stream_k && values[i] != 0) return true;
    return false;
}

namespace {
bool sums_by(const Family& f, const ParamValues& values, int how) {
    for (std::size_t i = 0; i < f.params.size() && i < values.size(); ++i)
        if (f.params[i].sum_pass && values[i] == how) return true;
    return false;
}
}  // namespace

bool Family::has_sum_pass(const ParamValues& values) const { return sums_by(*this, values, SGEMM_SUM_BY_PASS); }

bool Family::sums_with_atomics(const ParamValues& values) const { return sums_by(*this, values, SGEMM_SUM_BY_ATOMICS); }

bool Family::sums_in_order(const ParamValues& values) const { return sums_by(*this, values, SGEMM_SUM_IN_ORDER); }

bool Family::stages_operands(const ParamValues& values) const {
    for (std::size_t i = 0; i < params.size() && i < values.size(); ++i)
        if (params[i].aligned_only && values[i] == 2) return true;
    return false;
}

std::string Family::second_kernel(const ParamValues& values) const {
    if (has_stream_k_tail(values)) return tail_kernel;
    if (has_sum_pass(values)) return sum_pass_kernel;
    return stages_operands(values) ? stage_kernel : "";
}

std::string Family::second_name_expression(const ParamValues& values) const {
    const std::string second = second_kernel(values);
    if (second.empty()) return "";
    return second + name_expression(values).substr(kernel.size());
}

std::string Family::second_symbol(const ParamValues& values, const std::string& main_symbol) const {
    const std::string second = second_kernel(values);
    if (second.empty()) return "";
    const std::string main_prefix = "_Z" + std::to_string(kernel.size()) + kernel;
    if (main_symbol.compare(0, main_prefix.size(), main_prefix) != 0)
        throw Error("kernel symbol " + main_symbol + " does not start with " + main_prefix);
    return "_Z" + std::to_string(second.size()) + second + main_symbol.substr(main_prefix.size());
}

namespace {

// The sum pass's blocks: SGEMM_SUM_PASS_QUADS float4s of C each.
long long sum_pass_blocks(int M, int N) { return tiles_along(tiles_along(1ll * M * N, 4), SGEMM_SUM_PASS_QUADS); }

}  // namespace

bool Family::stages_call(const ParamValues& values, int N, int alignment) const {
    return stages_operands(values) && (alignment < 16 || N % 4 != 0);
}

LaunchGeometry Family::second_geometry(const ParamValues& values, int M, int N, int K, int sms, int alignment) const {
    const LaunchGeometry main = geometry(values, M, N, K);
    // In second_kernel's order, so that the geometry is the second kernel's own even for
    // values that a family's constraints would refuse (a stored row is not judged by them).
    if (has_stream_k_tail(values))
        return {dim3(stream_k_split(values, M, N, K, sms).tail_blocks), main.block, main.dynamic_shared_bytes};
    if (has_sum_pass(values)) {
        return {dim3(grid_blocks(sum_pass_blocks(M, N))), dim3(SGEMM_SUM_PASS_QUADS, main.grid.y),
                16u * SGEMM_SUM_PASS_QUADS * main.grid.y};
    }
    if (stages_operands(values)) {
        // With nothing to do it would only cost a launch: a staged winner may run a call of
        // class 16 with N a multiple of 4 as the nearest shape's winner.
        if (!stages_call(values, N, alignment)) return {dim3(0), dim3(SGEMM_STAGE_THREADS), 0};
        // Its blocks stride over the rows they copy and the groups of rows of C's last
        // columns, so more would idle: no more than either needs, nor than two per SM.
        const long long fringe_groups = N % 4 ? tiles_along(M, SGEMM_STAGE_THREADS / 32 * SGEMM_FRINGE_ROWS_PER_WARP) : 0;
        // At least any one operand's rows; none at class 16, where nothing is copied.
        const long long copied_rows = alignment < 16 ? std::max({M, N, K}) : 0;
        const long long blocks = std::clamp(std::max(fringe_groups, copied_rows), 1ll, 2ll * std::max(sms, 1));
        return {dim3(static_cast<unsigned>(blocks), 2), dim3(SGEMM_STAGE_THREADS), SGEMM_STAGE_SHARED_BYTES};
    }
    return {dim3(0), main.block, main.dynamic_shared_bytes};  // no second kernel
}

StreamKSplit Family::stream_k_split(const ParamValues& values, int M, int N, int K, int sms) const {
    const unsigned tiles = geometry(values, M, N, K).grid.x;
    const unsigned shared = has_stream_k_tail(values) && sms > 0 ? tiles % static_cast<unsigned>(sms) : 0;
    // The tail numbers its k iterations, shared tiles times k tiles, in an int: past that
    // (K in the tens of millions) the main kernel takes every tile, slower but right.
    if (static_cast<unsigned long long>(shared) * static_cast<unsigned>(K) >= (1ull << 31)) return {tiles, 0};
    // The tail's grid: one block for the head of each SM's run, one for its first part.
    return shared == 0 ? StreamKSplit{tiles, 0} : StreamKSplit{tiles - shared, 2u * static_cast<unsigned>(sms)};
}

int Family::required_alignment(const ParamValues& values) const {
    for (std::size_t i = 0; i < params.size() && i < values.size(); ++i)
        if (params[i].aligned_only && values[i] == 1) return 16;
    return 4;
}

bool Family::splits_k(const ParamValues& values) const {
    for (std::size_t i = 0; i < params.size() && i < values.size(); ++i)
        if (params[i].split_count && values[i] > 1) return true;
    return false;
}

std::string Family::describe(const ParamValues& values) const {
    std::string text = name;
    for (std::size_t i = 0; i < params.size() && i < values.size(); ++i)
        text += " " + params[i].name + "=" + std::to_string(values[i]);
    return text;
}

std::string Family::values_problem(const ParamValues& values) const {
    if (values.size() != params.size())
        return "family " + name + " takes " + std::to_string(params.size()) + " parameters, got " +
               std::to_string(values.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
        const auto& allowed = params[i].values;
        if (std::find(allowed.begin(), allowed.end(), values[i]) == allowed.end()) {
            std::string list;
            for (int v : allowed) list += (list.empty() ? "" : ",") + std::to_string(v);
            return params[i].name + "=" + std::to_string(values[i]) + " is not one of {" + list +
                   "} in family " + name;
        }
    }
    return "";
}

std::string Family::invalid_reason(const ParamValues& values, Arch arch) const {
    if (const std::string problem = values_problem(values); !problem.empty()) return problem;
    if (arch.sm < min_sm)
        return "family " + name + " needs sm_" + std::to_string(min_sm) + " or newer, not " + arch.name();
    return constraint_violation(values, arch_limits(arch));
}

std::string Family::invalid_on_every_target(const ParamValues& values) const {
    std::string reason;
    for (const int sm : compile_targets()) {
        reason = invalid_reason(values, Arch{sm});
        if (reason.empty()) return "";
    }
    return reason;
}

std::string Family::unsupported_shape_reason(const ParamValues& values, int M, int N, int K, Arch arch) const {
    if (M < 1 || N < 1 || K < 1) return "dimensions must be at least 1";
    // Values off the lists still run from a cached binary (a winner outside them, as an
    // edited row may hold), but a size or count below 1 is no kernel's: an edited or damaged row, which
    // geometry() would divide by.
    for (std::size_t i = 0; i < params.size() && i < values.size(); ++i) {
        const std::vector<int>& allowed = params[i].values;
        if (values[i] < 1 && *std::min_element(allowed.begin(), allowed.end()) >= 1)
            return params[i].name + "=" + std::to_string(values[i]) + " is no size or count a kernel of family " +
                   name + " can have";
    }
    const LaunchGeometry g = geometry(values, M, N, K);
    if (g.grid.x > static_cast<unsigned>(INT_MAX))
        return describe(values) + " would need more than 2^31 - 1 blocks in x for M=" + std::to_string(M) +
               " N=" + std::to_string(N);
    const unsigned long long threads = 1ull * g.block.x * g.block.y * g.block.z;
    const int max_threads = arch_limits(arch).max_threads_per_block;
    if (threads < 1 || threads > static_cast<unsigned long long>(max_threads))
        return describe(values) + " would launch blocks of " + std::to_string(threads) + " threads; " + arch.name() +
               " takes 1 to " + std::to_string(max_threads);
    if (g.grid.y > 65535 || g.grid.z > 65535)
        return describe(values) + " would need a grid of " + std::to_string(g.grid.y) + " x " +
               std::to_string(g.grid.z) + " blocks in y and z; the limit is 65535";
    if (has_sum_pass(values) && sum_pass_blocks(M, N) > INT_MAX)
        return describe(values) + " would need more than 2^31 - 1 blocks for the sum pass over C";
    if (has_sum_pass(values) && g.grid.y > SGEMM_SUM_PASS_MAX_SLICES)
        return describe(values) + " would leave " + std::to_string(g.grid.y) + " slices to the sum pass, which sums " +
               std::to_string(SGEMM_SUM_PASS_MAX_SLICES) + " at most";
    if (splits_k(values) && !has_sum_pass(values) &&
        static_cast<unsigned long long>(g.grid.x) * g.grid.z > SGEMM_WORKSPACE_MAX_COUNTERS)
        return describe(values) + " would need more split-K tile counters than the workspace holds (" +
               std::to_string(SGEMM_WORKSPACE_MAX_COUNTERS) + ")";
    const int shared_limit = arch_limits(arch).max_shared_per_block;
    if (g.dynamic_shared_bytes > static_cast<unsigned>(shared_limit))
        return describe(values) + " would need " + std::to_string(g.dynamic_shared_bytes) +
               " bytes of shared memory at K=" + std::to_string(K) + "; " + arch.name() + " allows " +
               std::to_string(shared_limit);
    return "";
}

bool Family::reads_transposes(const ParamValues& values, bool trans_a, bool trans_b) const {
    const auto flag = [&](const char* param) {
        for (std::size_t i = 0; i < params.size(); ++i)
            if (params[i].name == param) return values.at(i) != 0;
        return false;
    };
    return flag("TA") == trans_a && flag("TB") == trans_b;
}

std::size_t Family::workspace_bytes(const ParamValues& values, int M, int N, int K, int sms, int alignment) const {
    return workspace ? workspace(values, M, N, K, sms, alignment) : 0;
}

std::vector<ParamValues> Family::valid_configs(Arch arch) const {
    std::vector<ParamValues> out;
    ParamValues current(params.size());
    // Odometer over the cartesian product of the parameter lists.
    std::function<void(std::size_t)> walk = [&](std::size_t i) {
        if (i == params.size()) {
            if (invalid_reason(current, arch).empty()) out.push_back(current);
            return;
        }
        for (int v : params[i].values) {
            current[i] = v;
            walk(i + 1);
        }
    };
    walk(0);
    return out;
}

}  // namespace sgemm
