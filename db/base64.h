// Base64 (RFC 4648, with padding): how a cubin travels inside a CSV or JSON export.
#pragma once
#include <string>
#include <vector>

namespace sgemm {

std::string base64_encode(const std::vector<char>& bytes);
// Throws Error on a character outside the alphabet or a length that is not a multiple of 4.
std::vector<char> base64_decode(const std::string& text);

}  // namespace sgemm
