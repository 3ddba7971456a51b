// Host work spread over the CPUs the process may use: the tuner's random operands and the
// outputs it judges (its compiles take as many threads, sgemm-tune --jobs), and the compiles
// dispatch's create needs.
#pragma once
#include <cstddef>
#include <functional>

namespace sgemm {

// How many CPUs the calling thread may run on (its affinity, as a container's cpuset sets
// it), at least 1.
std::size_t usable_cpus();

// Runs body(begin, end) over [0, count) in contiguous pieces, one a usable CPU, the
// first on the calling thread; returns when every piece is done, and then throws the first
// piece's exception where one threw (on a machine that gives no more threads, the pieces
// run on the calling thread). Which piece runs where is
// all that depends on the number of threads: a caller that keeps a result per index and
// combines them in index order gets the same answer on any machine.
void parallel_for(std::size_t count, const std::function<void(std::size_t, std::size_t)>& body);

}  // namespace sgemm
