#include "tuner/kernel_cache.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "db/verify.h"
#include "src/cuda/check.h"
#include "src/records/kernel_records.h"

namespace sgemm {

void KernelCache::build(const std::vector<Candidate>& candidates, const std::function<void(int, int)>& progress) {
    // One representative candidate per key not built yet.
    std::vector<std::pair<std::string, Candidate>> todo;
    std::set<std::string> damaged;  // keys whose cached binary is compiled again and replaced
    for (const Candidate& c : candidates) {
        const std::string key = kernel_cache_key(*c.family, c.values, arch_);
        if (by_key_.count(key) ||
            std::any_of(todo.begin(), todo.end(), [&](const auto& t) { return t.first == key; }))
            continue;
        if (store_) {
            if (std::optional<Binary> b = store_->find_binary(key)) {
                // A cubin damaged in the file (cut short, overwritten) would crash the CUDA
                // loader, run after run: such a row is compiled again instead.
                if (cubin_problem(*b).empty() && b->arch == arch_.sm) {
                    by_key_[key] = BuiltKernel{from_binary(*b), ""};
                    ++cache_hits_;
                    continue;
                }
                damaged.insert(key);
            }
        }
        todo.emplace_back(key, c);
    }

    std::vector<BuiltKernel> built(todo.size());
    std::vector<char> attempted(todo.size(), false);  // not every key is compiled after a stop
    std::atomic<std::size_t> next{0};
    std::atomic<int> done{0};
    std::mutex progress_mutex;
    // NVRTC's own failure (its built-ins library missing, memory) is no candidate's: taken as
    // each one's, it left every shape to cuBLAS as if no kernel compiled, and stored so. The
    // first stops the compiles and is thrown once the threads are done.
    std::exception_ptr compiler_failure;
    std::atomic<bool> compiler_failed{false};
    std::mutex failure_mutex;
    auto worker = [&] {
        for (std::size_t i; !compiler_failed && !(stop_ && stop_()) && (i = next++) < todo.size();) {
            const Candidate& c = todo[i].second;
            // Any other exception is this candidate's failure (a number past its type in its
            // constraints): none may escape a thread, which would end the process.
            try {
                built[i].kernel = compile_kernel(*c.family, c.values, arch_);
            } catch (const NvrtcError&) {
                const std::lock_guard<std::mutex> lock(failure_mutex);
                if (!compiler_failure) compiler_failure = std::current_exception();
                compiler_failed = true;
                continue;  // not attempted: nothing is kept for it
            } catch (const std::exception& e) {
                built[i].error = e.what();
            }
            attempted[i] = true;
            const int finished = ++done;
            if (progress) {
                std::lock_guard<std::mutex> lock(progress_mutex);
                progress(finished, static_cast<int>(todo.size()));
            }
        }
    };
    std::vector<std::thread> pool;
    const int threads = std::max(1, std::min<int>(jobs_, static_cast<int>(todo.size())));
    for (int t = 0; t < threads; ++t) {
        try {
            pool.emplace_back(worker);
        } catch (const std::system_error&) {
            break;  // no more threads to be had (a limit on tasks): those started take the rest
        }
    }
    if (pool.empty()) worker();  // none at all: the compiles run on this thread
    for (std::thread& t : pool) t.join();

    // Every kernel is kept before any is stored: a store that fails (the database locked past
    // its timeout, a full disk) throws, and leaves the batch's compiles usable.
    std::vector<Binary> to_store;
    for (std::size_t i = 0; i < todo.size(); ++i) {
        if (!attempted[i]) continue;
        if (built[i].kernel) {
            ++compiled_;
            if (store_) to_store.push_back(to_binary(*built[i].kernel, kernel_ref(*todo[i].second.family, todo[i].second.values)));
        }
        by_key_[todo[i].first] = std::move(built[i]);
    }
    for (const Binary& binary : to_store) {
        if (damaged.count(binary.cache_key))
            store_->replace_binary(binary);
        else
            store_->put_binary(binary);
    }
    if (compiler_failure) std::rethrow_exception(compiler_failure);
}

BuiltKernel KernelCache::get(const Candidate& candidate) const {
    const auto it = by_key_.find(kernel_cache_key(*candidate.family, candidate.values, arch_));
    if (it == by_key_.end()) throw Error(candidate.describe() + " was not built");
    BuiltKernel copy = it->second;
    if (copy.kernel) copy.kernel->values = candidate.values;  // its split count is the candidate's own
    return copy;
}

}  // namespace sgemm
