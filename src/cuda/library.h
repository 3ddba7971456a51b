// Library: a cubin loaded into the current context through the runtime's library API
// (cudaLibraryLoadData), so no driver symbol is linked; kernels are looked up by their
// lowered (mangled) name.
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "src/cuda/check.h"

namespace sgemm {

class Library {
public:
    Library() = default;
    explicit Library(const std::vector<char>& image) {
        SGEMM_CUDA_CHECK(cudaLibraryLoadData(&library_, image.data(), nullptr, nullptr, 0,
                                             nullptr, nullptr, 0));
    }
    ~Library() {
        if (library_) cudaLibraryUnload(library_);
    }
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    Library(Library&& other) noexcept : library_(std::exchange(other.library_, nullptr)) {}
    Library& operator=(Library&& other) noexcept {
        std::swap(library_, other.library_);
        return *this;
    }

    cudaKernel_t kernel(const std::string& lowered_name) const {
        cudaKernel_t k = nullptr;
        SGEMM_CUDA_CHECK(cudaLibraryGetKernel(&k, library_, lowered_name.c_str()));
        return k;
    }

private:
    cudaLibrary_t library_ = nullptr;
};

}  // namespace sgemm
