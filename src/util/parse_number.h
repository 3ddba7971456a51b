// Whole numbers from text, strictly: the whole text must be the number ("12x", "1.5" and ""
// are not), so that a bad field in a file is reported instead of half-read.
#pragma once
#include <optional>
#include <string>

#include "src/util/error.h"
#include "src/util/text.h"

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

// A GEMM size (M, N or K): a whole number from `smallest` (1, or 0 where a size of 0 is
// taken) to 2^31-1. Throws Error "NAME must be at least SMALLEST, not TEXT", "NAME TEXT is
// more than 2147483647, the largest size" or "NAME 'TEXT' is not a whole number".
inline int parse_gemm_size(const std::string& text, const std::string& name, int smallest = 1) {
    const std::optional<long long> v = parse_whole_number(text);
    // Digits past even 64 bits: a size too large (or, with a minus, too small), not a malformed one.
    const std::size_t sign = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
    const bool digits = text.size() > sign && text.find_first_not_of("0123456789", sign) == std::string::npos;
    // A number of a million digits is cut, with its length, as any long field is quoted.
    const std::string shown = cut_with_length(printable(text), kQuotedBytes);
    if ((!v && digits && text[0] == '-') || (v && *v < smallest))
        throw Error(name + " must be at least " + std::to_string(smallest) + ", not " + shown);
    if ((!v && digits) || (v && *v > 2147483647LL))
        throw Error(name + " " + shown + " is more than 2147483647, the largest size");
    if (!v) throw Error(name + " " + single_quoted(text) + " is not a whole number");
    return static_cast<int>(*v);
}

}  // namespace sgemm
