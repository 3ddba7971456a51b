// Host work of the tuner spread over the machine's cores: the random operands it draws,
// and the outputs it judges.
#pragma once
#include <cstddef>
#include <functional>

namespace sgemm {

// Runs body(begin, end) over [0, count) in contiguous pieces, one a hardware thread, the
// first on the calling thread; returns when every piece is done, and then throws the first
// piece's exception where one threw (on a machine that gives no more threads, the pieces
// run on the calling thread). Which piece runs where is
// all that depends on the number of threads: a caller that keeps a result per index and
// combines them in index order gets the same answer on any machine.
void parallel_for(std::size_t count, const std::function<void(std::size_t, std::size_t)>& body);

}  // namespace sgemm
