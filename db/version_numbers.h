// A library version's numbers, which tell a version that builds write from other text: prune
// compares them to find older builds' rows, and import refuses a version that has none.
#pragma once
#include <string>
#include <vector>

namespace sgemm {

// The numbers of a dotted version ("0.2.0" -> {0, 2, 0}), before any "-" or "+" suffix (a
// pre-release or a build's label: "0.4.0-dev" -> {0, 4, 0}); empty when it is not one (a part
// that is empty, not digits, or longer than 9 digits).
std::vector<long> version_numbers(const std::string& labelled);

}  // namespace sgemm
