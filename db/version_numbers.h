// A library version's numbers, which tell a version that builds write from other text: prune
// compares them to find older builds' rows, and import refuses a version no build writes.
#pragma once
#include <string>
#include <vector>

namespace sgemm {

// The numbers of a dotted version ("0.2.0" -> {0, 2, 0}), before any "-" or "+" suffix (a
// pre-release or a build's label: "0.4.0-dev" -> {0, 4, 0}); empty when it is not one (a part
// that is empty, not digits, or longer than 9 digits).
std::vector<long> version_numbers(const std::string& labelled);

// Whether `labelled` is a version as builds write it: three numbers without leading zeros
// ("0.3.0"), with an optional label after a "-" or "+" ("0.4.0-dev"). Other text ("0.3",
// "00.3.0") would make a device row that no build reads, which prune --stale would then take
// for an older or a newer build's.
bool is_build_version(const std::string& labelled);

}  // namespace sgemm
