#include "src/jit/compiler.h"

#include <nvrtc.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "src/cuda/check.h"
#include "src/jit/embedded_templates.h"
#include "src/util/hash.h"

namespace sgemm {

std::string nvrtc_version() {
    int major = 0, minor = 0;
    SGEMM_NVRTC_CHECK(nvrtcVersion(&major, &minor));
    return std::to_string(major) + "." + std::to_string(minor);
}

std::string render_source(const Family& family) {
    return "#include \"" + family.template_file + "\"\n";
}

std::vector<std::string> compile_options(Arch arch, KernelBuild build) {
    // A real sm_XY target makes NVRTC emit a cubin (SASS), so loading needs no driver JIT.
    // -v puts ptxas's register, shared-memory and spill report into the log.
    std::vector<std::string> options = {"--gpu-architecture=" + arch.name(), "--std=c++17", "--ptxas-options=-v",
                                        "--fmad=true", "--device-as-default-execution-space"};
    if (build == KernelBuild::timeline) options.push_back("-DSGEMM_TIMELINE");
    return options;
}

std::string kernel_cache_key(const Family& family, const ParamValues& values, Arch arch, KernelBuild build) {
    // Within a process the key depends only on these three (the templates and NVRTC are
    // fixed): each is hashed once, not again for every candidate a tuning run builds or
    // looks up and every winner a dispatch start-up checks (some 50 KB of template text each).
    const std::string source = render_source(family),
                      instance = family.name_expression(values) + " " + family.tail_name_expression(values);
    const std::string id = source + instance + arch.name() + (build == KernelBuild::timeline ? " timeline" : "");
    static std::mutex mutex;
    static std::map<std::string, std::string> known;
    {
        const std::lock_guard<std::mutex> lock(mutex);
        if (const auto it = known.find(id); it != known.end()) return it->second;
    }
    Fnv1a64 h;
    h.add(source).add(instance);
    for (const EmbeddedFile& f : embedded_templates()) h.add(f.name).add(f.text);
    for (const std::string& o : compile_options(arch, build)) h.add(o);
    h.add(arch.name()).add(nvrtc_version());
    const std::lock_guard<std::mutex> lock(mutex);
    return known.emplace(id, h.hex()).first->second;
}

namespace {
struct ProgramDeleter {
    void operator()(nvrtcProgram* p) const {
        nvrtcDestroyProgram(p);
        delete p;
    }
};
}  // namespace

CompiledKernel compile_kernel(const Family& family, const ParamValues& values, Arch arch, KernelBuild build) {
    const std::string invalid = family.invalid_reason(values, arch);
    if (!invalid.empty())
        throw InvalidConfigError("invalid configuration " + family.describe(values) + " for " +
                                 arch.name() + ": " + invalid);

    CompiledKernel out;
    out.family = family.name;
    out.values = values;
    out.arch = arch;
    out.name_expression = family.name_expression(values);
    out.cache_key = kernel_cache_key(family, values, arch, build);

    std::vector<const char*> header_texts, header_names;
    for (const EmbeddedFile& f : embedded_templates()) {
        header_texts.push_back(f.text);
        header_names.push_back(f.name);
    }
    const std::string source = render_source(family);
    const auto start = std::chrono::steady_clock::now();

    std::unique_ptr<nvrtcProgram, ProgramDeleter> program(new nvrtcProgram(nullptr));
    SGEMM_NVRTC_CHECK(nvrtcCreateProgram(program.get(), source.c_str(), (family.name + ".cu").c_str(),
                                         static_cast<int>(header_texts.size()), header_texts.data(),
                                         header_names.data()));
    SGEMM_NVRTC_CHECK(nvrtcAddNameExpression(*program, out.name_expression.c_str()));
    const std::string tail = family.tail_name_expression(values);
    if (!tail.empty()) SGEMM_NVRTC_CHECK(nvrtcAddNameExpression(*program, tail.c_str()));
    const std::vector<std::string> options = compile_options(arch, build);
    std::vector<const char*> option_ptrs;
    for (const std::string& o : options) option_ptrs.push_back(o.c_str());
    const nvrtcResult status =
        nvrtcCompileProgram(*program, static_cast<int>(option_ptrs.size()), option_ptrs.data());

    std::size_t log_size = 0;
    SGEMM_NVRTC_CHECK(nvrtcGetProgramLogSize(*program, &log_size));
    out.log.resize(log_size);
    SGEMM_NVRTC_CHECK(nvrtcGetProgramLog(*program, out.log.data()));
    while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
    if (status != NVRTC_SUCCESS)
        throw CompileError("NVRTC failed to compile " + out.name_expression + " for " + arch.name() +
                           " (" + nvrtcGetErrorString(status) + "):\n" + out.log);

    const char* lowered = nullptr;
    SGEMM_NVRTC_CHECK(nvrtcGetLoweredName(*program, out.name_expression.c_str(), &lowered));
    out.lowered_name = lowered;
    if (!tail.empty()) {
        SGEMM_NVRTC_CHECK(nvrtcGetLoweredName(*program, tail.c_str(), &lowered));
        out.tail_lowered_name = lowered;
        // Binaries read back from a database find the tail by this rule alone.
        if (out.tail_lowered_name != family.tail_symbol(values, out.lowered_name))
            throw CompileError("the tail " + out.tail_lowered_name + " of " + out.lowered_name +
                               " is not the symbol Family::tail_symbol derives");
    }
    std::size_t cubin_size = 0;
    SGEMM_NVRTC_CHECK(nvrtcGetCUBINSize(*program, &cubin_size));
    out.cubin.resize(cubin_size);
    SGEMM_NVRTC_CHECK(nvrtcGetCUBIN(*program, out.cubin.data()));
    out.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    out.ptxas = parse_ptxas_info(out.log);
    return out;
}

}  // namespace sgemm
