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

std::string evictor_source() {
    for (const EmbeddedFile& f : embedded_tuner_kernels())
        if (std::string(f.name) == kSourceName) return f.text;
    throw Error(std::string("the tuner's kernels hold no ") + kSourceName);
}

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
    return compile_standalone(kSourceName, evictor_source(),
                              {"EVICT_WARPS=" + std::to_string(kWarps),
                               "EVICT_FMAS_PER_SEGMENT=" + std::to_string(kFmasPerSegment)},
                              arch);
}

InstructionCacheEvictor::InstructionCacheEvictor(const DeviceInfo& device)
    : library_(evictor_cubin(Arch{device.sm()})),
      kernel_(library_.kernel("evict_instruction_caches")),
      block_sm_(2 * static_cast<std::size_t>(device.sm_count)) {
    block_sm_.upload(std::vector<int>(block_sm_.size(), -1));  // no SM until an eviction runs
}

void InstructionCacheEvictor::evict(cudaStream_t stream) {
    int* block_sm = block_sm_.data();
    float seed = 1.0f;
    void* args[] = {&block_sm, &seed};
    SGEMM_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_),
                                      dim3(static_cast<unsigned>(block_sm_.size())), dim3(kWarps * 32), args, 0,
                                      stream));
}

std::vector<int> InstructionCacheEvictor::block_sms() const {
    SGEMM_CUDA_CHECK(cudaDeviceSynchronize());  // the eviction may be on any stream
    return block_sm_.download();
}

}  // namespace sgemm
