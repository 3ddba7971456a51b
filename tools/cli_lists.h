// Comma-separated lists on command lines ("--sizes 1024,2048", "--families decode,async").
#pragma once
#include <string>
#include <vector>

namespace sgemm {

// "1024,2048" -> {1024, 2048}; anything but positive integers throws
// boost::program_options::error naming the option and the bad item.
std::vector<int> parse_positive_int_list(const std::string& text, const char* option);

// "a,b" -> {"a", "b"}; empty items are dropped.
std::vector<std::string> parse_name_list(const std::string& text);

}  // namespace sgemm
