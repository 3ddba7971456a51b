#include "src/cuda/check.h"

namespace sgemm {
namespace {
std::string where(const char* call, const char* file, int line) {
    return std::string(call) + " (" + file + ":" + std::to_string(line) + ")";
}
}  // namespace

bool means_no_device(cudaError_t status) {
    return status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver || status == cudaErrorStubLibrary;
}

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
    cudaGetLastError();  // clear a sticky-free error so later calls start clean
    const std::string text = std::string("CUDA error: ") + cudaGetErrorName(status) + ": " +
                             cudaGetErrorString(status) + " in " + where(call, file, line);
    if (means_no_device(status)) throw NoDeviceError(text);
    throw CudaError(text);
}

void throw_nvrtc_error(nvrtcResult status, const char* call, const char* file, int line) {
    throw NvrtcError(std::string("NVRTC error: ") + nvrtcGetErrorString(status) + " in " +
                where(call, file, line));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
    throw Error(std::string("cuBLAS error: ") + cublasGetStatusName(status) + ": " +
                cublasGetStatusString(status) + " in " + where(call, file, line));
}

}  // namespace sgemm
