// Preloaded (LD_PRELOAD) into sgemm-tune by tune_cli.sh: NVRTC refuses every compile of the
// program named by NVRTC_REFUSE ("naive.cu", a family's), as it refuses a source with errors,
// and gives a log of several lines, longer than the 400 bytes a tune stores of it. Other
// programs (the tuner's own kernels) compile as they would. No family's configuration fails to
// compile, so this is how the test reaches what a dry run prints of such a log (all of it, a
// line of the log to a line) and what a tune stores (its start, with its length). Preloaded
// into gpu_tests with "scale_c.cu" (its meson test), it is how dispatch's kernel that scales C
// alone is refused, to see the status a call then returns.
#include <dlfcn.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

namespace {

const std::string& planted_log() {
    static const std::string log = [] {
        std::string long_line = "planted.cu(4): error:";
        while (long_line.size() < 450) long_line += " this line is long, so that the log passes what a tune stores;";
        return "planted.cu(3): error: identifier \"planted_by_tune_cli\" is undefined\n" + long_line +
               "\n2 errors detected in the compilation of \"planted.cu\".\n";
    }();
    return log;
}

// The programs created under the refused name, until destroyed (NVRTC may reuse an address).
std::mutex refused_mutex;
std::set<nvrtcProgram> refused;

bool is_refused(nvrtcProgram program) {
    std::lock_guard<std::mutex> lock(refused_mutex);
    return refused.count(program) > 0;
}

// NVRTC's own definition of `name`, which this library's hides; without it (a program that
// does not load libnvrtc) there is nothing to forward to, which is said rather than crashed on.
template <class Function>
Function nvrtcs(Function, const char* name) {
    void* found = dlsym(RTLD_NEXT, name);
    if (!found) {
        std::fprintf(stderr, "nvrtc_refuses_compiles: no %s after this library\n", name);
        std::abort();
    }
    return reinterpret_cast<Function>(found);
}

}  // namespace

extern "C" {

nvrtcResult nvrtcCreateProgram(nvrtcProgram* program, const char* source, const char* name, int header_count,
                               const char* const* headers, const char* const* include_names) {
    const nvrtcResult status = nvrtcs(&nvrtcCreateProgram, "nvrtcCreateProgram")(program, source, name, header_count,
                                                                                headers, include_names);
    const char* refuse = std::getenv("NVRTC_REFUSE");
    if (status == NVRTC_SUCCESS && name && refuse && std::strcmp(name, refuse) == 0) {
        std::lock_guard<std::mutex> lock(refused_mutex);
        refused.insert(*program);
    }
    return status;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram* program) {
    {
        std::lock_guard<std::mutex> lock(refused_mutex);
        refused.erase(*program);
    }
    return nvrtcs(&nvrtcDestroyProgram, "nvrtcDestroyProgram")(program);
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram program, int option_count, const char* const* options) {
    if (is_refused(program)) return NVRTC_ERROR_COMPILATION;
    return nvrtcs(&nvrtcCompileProgram, "nvrtcCompileProgram")(program, option_count, options);
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram program, size_t* size) {
    if (!is_refused(program)) return nvrtcs(&nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize")(program, size);
    *size = planted_log().size() + 1;  // with its terminating zero, as NVRTC counts it
    return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram program, char* log) {
    if (!is_refused(program)) return nvrtcs(&nvrtcGetProgramLog, "nvrtcGetProgramLog")(program, log);
    std::memcpy(log, planted_log().c_str(), planted_log().size() + 1);
    return NVRTC_SUCCESS;
}

}  // extern "C"
