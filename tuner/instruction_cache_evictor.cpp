#include "tuner/instruction_cache_evictor.h"

#include <map>
#include <mutex>
#include <string>

#include "tuner/embedded_kernels.h"

namespace sgemm {

namespace {
// 16 warps of 512 FFMAs each: with the moves of the constants, some 236 KB of code.
constexpr int kWarps = 16;
constexpr int kFmasPerSegment = 512;
constexpr const char* kSourceName = "evict_instruction_caches.cu";
constexpr const char* kKernelName = "evict_instruction_caches";  // its extern "C" name there

// Compiled once per process and arch: every timing object of a process shares it.
const std::vector<char>& evictor_cubin(Arch arch) {
    static std::mutex mutex;
    static std::map<int, std::vector<char>> cubins;
    const std::lock_guard<std::mutex> lock(mutex);
    auto it = cubins.find(arch.sm);
    if (it == cubins.end()) it = cubins.emplace(arch.sm, compile_instruction_cache_evictor(arch).cubin).first;
    return it->second;
}
}  // namespace

StandaloneKernel compile_instruction_cache_evictor(Arch arch) {
    const char* source = find_embedded(embedded_tuner_kernels(), kSourceName);
    if (!source) throw Error(std::string("the tuner's kernels hold no ") + kSourceName);
    return compile_standalone(kSourceName, source,
                              {"EVICT_WARPS=" + std::to_string(kWarps),
                               "EVICT_FMAS_PER_SEGMENT=" + std::to_string(kFmasPerSegment)},
                              arch);
}

InstructionCacheEvictor::InstructionCacheEvictor(const DeviceInfo& device)
    : arch_{device.sm()}, blocks_(2 * device.sm_count), warp_sm_(static_cast<std::size_t>(blocks_) * kWarps) {
    warp_sm_.upload(std::vector<int>(warp_sm_.size(), -1));  // no warp has run yet
}

void InstructionCacheEvictor::evict(cudaStream_t stream) {
    if (!kernel_) {
        library_ = Library(evictor_cubin(arch_));
        kernel_ = library_.kernel(kKernelName);
    }
    // Every warp overwrites its -1 (all bits set) with its SM.
    SGEMM_CUDA_CHECK(cudaMemsetAsync(warp_sm_.data(), 0xff, warp_sm_.bytes(), stream));
    int* warp_sm = warp_sm_.data();
    float seed = 1.0f;
    void* args[] = {&warp_sm, &seed};
    SGEMM_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(static_cast<unsigned>(blocks_)),
                                      dim3(kWarps * 32), args, 0, stream));
}

std::vector<int> InstructionCacheEvictor::warp_sms() const {
    SGEMM_CUDA_CHECK(cudaDeviceSynchronize());  // the eviction may be on any stream
    return warp_sm_.download();
}

}  // namespace sgemm
