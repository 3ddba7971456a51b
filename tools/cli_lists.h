// Comma-separated lists on command lines ("--sizes 1024,2048", "--families decode,async").
#pragma once
#include <string>
#include <vector>

namespace sgemm {

// "1024,2048" or "1024, 2048" -> {1024, 2048}; anything but 32-bit integers of at least
// `min_value` throws boost::program_options::error naming the option and the bad item.
std::vector<int> parse_int_list(const std::string& text, const char* option, int min_value);
// Sizes or batches: positive, and each once (a size given twice would be measured twice, a
// batch's rows written twice).
std::vector<int> parse_positive_int_list(const std::string& text, const char* option);

// "a,b" or "a, b" -> {"a", "b"}. A list with no name in it ("", ",,") throws
// boost::program_options::error naming the option: the tools read an absent option as "all",
// so an empty one must not quietly mean the same. An empty item ("a,,b", "a,") and a name
// given twice throw too (sgemm-tune would list and time each of its candidates twice).
std::vector<std::string> parse_name_list(const std::string& text, const char* option);

}  // namespace sgemm
