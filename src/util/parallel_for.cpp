#include "src/util/parallel_for.h"

#include <sched.h>

#include <algorithm>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace sgemm {

std::size_t usable_cpus() {
    // The CPUs the calling thread may run on: a container's cpuset may hold a few of a large
    // machine's, which hardware_concurrency counts all of.
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        return static_cast<std::size_t>(std::max(1, CPU_COUNT(&allowed)));
    return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(std::size_t count, const std::function<void(std::size_t, std::size_t)>& body) {
    if (count == 0) return;
    const std::size_t threads = usable_cpus();
    const std::size_t piece = (count + threads - 1) / threads;
    const std::size_t pieces = (count + piece - 1) / piece;
    // What each piece threw, rethrown once every thread is joined: an exception that leaves a
    // thread, or a thread destroyed unjoined, ends the process.
    std::vector<std::exception_ptr> thrown(pieces);
    const auto run = [&](std::size_t p) {
        try {
            body(p * piece, std::min(count, (p + 1) * piece));
        } catch (...) {
            thrown[p] = std::current_exception();
        }
    };
    std::vector<std::thread> helpers;
    for (std::size_t p = 1; p < pieces; ++p) {
        try {
            helpers.emplace_back(run, p);
        } catch (const std::system_error&) {
            run(p);  // no thread to be had: the piece runs here
        }
    }
    run(0);
    for (std::thread& t : helpers) t.join();
    for (const std::exception_ptr& e : thrown)
        if (e) std::rethrow_exception(e);
}

}  // namespace sgemm
