#include "src/families/family.h"

#include <algorithm>

#include "src/util/error.h"

namespace sgemm {

int Family::value(const ParamValues& values, const std::string& param) const {
    for (std::size_t i = 0; i < params.size() && i < values.size(); ++i)
        if (params[i].name == param) return values[i];
    throw Error("family " + name + " has no parameter " + param);
}

std::string Family::name_expression(const ParamValues& values) const {
    std::string text = kernel + "<";
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i ? ", " : "") + std::to_string(values[i]);
    return text + ">";
}

std::string Family::describe(const ParamValues& values) const {
    std::string text = name;
    for (std::size_t i = 0; i < params.size() && i < values.size(); ++i)
        text += " " + params[i].name + "=" + std::to_string(values[i]);
    return text;
}

std::string Family::invalid_reason(const ParamValues& values, Arch arch) const {
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
    if (arch.sm < min_sm)
        return "family " + name + " needs sm_" + std::to_string(min_sm) + " or newer, not " + arch.name();
    return constraint_violation(values, arch_limits(arch));
}

std::string Family::unsupported_shape_reason(const ParamValues& values, int M, int N, int K) const {
    if (M < 1 || N < 1 || K < 1) return "dimensions must be at least 1";
    const LaunchGeometry g = geometry(values, M, N, K);
    if (g.grid.y > 65535 || g.grid.z > 65535)
        return describe(values) + " would need a grid of " + std::to_string(g.grid.y) +
               " rows of blocks; the limit is 65535";
    return "";
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
