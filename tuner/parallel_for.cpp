#include "tuner/parallel_for.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace sgemm {

void parallel_for(std::size_t count, const std::function<void(std::size_t, std::size_t)>& body) {
    if (count == 0) return;
    const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t piece = (count + threads - 1) / threads;
    std::vector<std::thread> helpers;
    for (std::size_t begin = piece; begin < count; begin += piece)
        helpers.emplace_back(body, begin, std::min(count, begin + piece));
    body(0, std::min(count, piece));
    for (std::thread& t : helpers) t.join();
}

}  // namespace sgemm
