// Whole numbers from text, strictly: the whole text must be the number ("12x", "1.5" and ""
// are not), so that a bad field in a file is reported instead of half-read.
#pragma once
#include <optional>
#include <string>

namespace sgemm {

inline std::optional<long long> parse_whole_number(const std::string& text) {
    std::size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (text.empty() || used != text.size()) return std::nullopt;
    return v;
}

}  // namespace sgemm
