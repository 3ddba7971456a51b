#include "db/version_numbers.h"

#include <algorithm>

namespace sgemm {

std::vector<long> version_numbers(const std::string& labelled) {
    const std::string version = labelled.substr(0, labelled.find_first_of("-+"));
    std::vector<long> numbers;
    std::size_t start = 0;
    while (start <= version.size()) {
        const std::size_t end = std::min(version.find('.', start), version.size());
        const std::string part = version.substr(start, end - start);
        if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) return {};
        numbers.push_back(std::stol(part));
        start = end + 1;
    }
    return numbers;
}

bool is_build_version(const std::string& labelled) {
    const std::vector<long> numbers = version_numbers(labelled);
    const std::size_t label = labelled.find_first_of("-+");
    if (numbers.size() != 3 || label + 1 == labelled.size()) return false;
    return std::to_string(numbers[0]) + "." + std::to_string(numbers[1]) + "." + std::to_string(numbers[2]) ==
           labelled.substr(0, label);
}

}  // namespace sgemm
