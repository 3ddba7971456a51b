#include "src/jit/compiler.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <mutex>

#include "src/cuda/check.h"
#include "src/jit/embedded_templates.h"
#include "src/jit/family_host_sources.h"
#include "src/util/hash.h"

namespace sgemm {

std::string nvrtc_version() {
    // Asked once: the library is fixed for the process, and every cache key names it.
    static const std::string version = [] {
        int major = 0, minor = 0;
        SGEMM_NVRTC_CHECK(nvrtcVersion(&major, &minor));
        return std::to_string(major) + "." + std::to_string(minor);
    }();
    return version;
}

std::string render_source(const Family& family) {
    return "#include \"" + family.template_file + "\"\n";
}

std::vector<std::string> compile_options(Arch arch, KernelBuild build) {
    // A real sm_XY target makes NVRTC emit a cubin (SASS), so loading needs no driver JIT.
    // -v puts ptxas's register, shared-memory and spill report into the log.
    // --no-source-include: headers come only from those the program is given, never from
    // the disk beside the program's name (the working directory), whose text
    // family_sources_hash would not cover.
    std::vector<std::string> options = {"--gpu-architecture=" + arch.name(), "--std=c++17", "--ptxas-options=-v",
                                        "--fmad=true", "--device-as-default-execution-space", "--no-source-include"};
    if (build == KernelBuild::timeline) options.push_back("-DSGEMM_TIMELINE");
    if (build == KernelBuild::late_first_slice) options.push_back("-DSGEMM_TEST_LATE_FIRST_SLICE");
    return options;
}

std::string family_sources_hash(const Family& family) {
    // Asked for every candidate a tune builds and every winner dispatch loads: each
    // family's sources are scanned and hashed once a process.
    static std::mutex mutex;
    static std::map<std::string, std::string> known;
    const std::lock_guard<std::mutex> lock(mutex);
    const std::string sources = family.template_file + " " + family.host_source;
    auto it = known.find(sources);
    if (it == known.end()) {
        Fnv1a64 h;
        h.add(template_sources_hash(family.template_file)).add(family_host_sources_hash(family.host_source));
        it = known.emplace(sources, h.hex()).first;
    }
    return it->second;
}

std::string kernel_cache_key(const Family& family, const ParamValues& values, Arch arch, KernelBuild build,
                             const std::string& nvrtc) {
    // Within a process the key depends only on the source, the family's host code, the
    // instance, the arch, the kind of build and the NVRTC version (the sources are fixed):
    // each is hashed once, not again for every candidate a tuning run builds or looks up and
    // every winner a dispatch start-up checks (some 50 KB of template text each).
    const std::string source = render_source(family),
                      instance = family.name_expression(values) + " " + family.second_name_expression(values);
    const std::string id = source + family.host_source + " " + instance + arch.name() + " build " +
                           std::to_string(static_cast<int>(build)) + " nvrtc " + nvrtc;
    static std::mutex mutex;
    static std::map<std::string, std::string> known;
    {
        const std::lock_guard<std::mutex> lock(mutex);
        if (const auto it = known.find(id); it != known.end()) return it->second;
    }
    Fnv1a64 h;
    h.add(source).add(instance).add(family_sources_hash(family));
    for (const std::string& o : compile_options(arch, build)) h.add(o);
    h.add(arch.name()).add(nvrtc);
    const std::lock_guard<std::mutex> lock(mutex);
    return known.emplace(id, h.hex()).first->second;
}

namespace {
// Whether this NVRTC has a compile cache (12.9 and later), which --no-cache turns off.
bool nvrtc_caches() {
    static const bool caches = [] {
        int major = 0, minor = 0;
        SGEMM_NVRTC_CHECK(nvrtcVersion(&major, &minor));
        return major > 12 || (major == 12 && minor >= 9);
    }();
    return caches;
}

// The tuner refuses candidates that spill and sizes occupancy by registers, from ptxas's
// report in the log: a compile without one must not pass as "no spills, 0 registers".
void require_ptxas_report(const PtxasInfo& ptxas, const std::string& what, const std::string& log) {
    if (!ptxas.found) throw CompileError("NVRTC's log for " + what + " holds no ptxas report (registers, spills):\n" + log);
}

// One NVRTC program: created from a source and the headers it may include, compiled once,
// then read for its log, its lowered names and its cubin.
class Program {
public:
    Program(const std::string& source, const std::string& file_name, const std::vector<EmbeddedFile>& headers) {
        std::vector<const char*> texts, names;
        for (const EmbeddedFile& f : headers) {
            texts.push_back(f.text);
            names.push_back(f.name);
        }
        SGEMM_NVRTC_CHECK(nvrtcCreateProgram(&program_, source.c_str(), file_name.c_str(),
                                             static_cast<int>(texts.size()), texts.data(), names.data()));
    }
    ~Program() { nvrtcDestroyProgram(&program_); }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;

    void add_name_expression(const std::string& expression) {
        SGEMM_NVRTC_CHECK(nvrtcAddNameExpression(program_, expression.c_str()));
    }
    // Compiles, keeps the log, and throws CompileError naming `what` where NVRTC refused the
    // source; any other failure (its built-ins library missing, memory, an option) is NVRTC's
    // own: NvrtcError, which a tune must not take for a candidate's.
    void compile(const std::vector<std::string>& options, const std::string& what, const std::string& arch_name) {
        warm_up_nvrtc();  // so that NVRTC's first compile leaves the process's signal handlers as they were
        std::vector<const char*> option_ptrs;
        for (const std::string& o : options) option_ptrs.push_back(o.c_str());
        // From 12.9 NVRTC keeps compiles in the driver's cache (~/.nv/ComputeCache) where a
        // GPU driver is installed, and a compile it finds there runs no ptxas and so prints
        // no ptxas report: the registers and spills the tuner judges candidates by (an H200
        // gave a report-less cubin on every repeat). The option changes nothing in the
        // cubin, so it stays out of compile_options and the cache keys hashed from them.
        if (nvrtc_caches()) option_ptrs.push_back("--no-cache");
        const nvrtcResult status =
            nvrtcCompileProgram(program_, static_cast<int>(option_ptrs.size()), option_ptrs.data());
        std::size_t log_size = 0;
        SGEMM_NVRTC_CHECK(nvrtcGetProgramLogSize(program_, &log_size));
        log_.resize(log_size);
        SGEMM_NVRTC_CHECK(nvrtcGetProgramLog(program_, log_.data()));
        while (!log_.empty() && log_.back() == '\0') log_.pop_back();
        if (status == NVRTC_ERROR_COMPILATION)
            throw CompileError("NVRTC failed to compile " + what + " for " + arch_name + " (" +
                               nvrtcGetErrorString(status) + "):\n" + log_);
        if (status != NVRTC_SUCCESS)
            throw NvrtcError("NVRTC could not run its compile of " + what + " for " + arch_name + " (" +
                        nvrtcGetErrorString(status) + ")" + (log_.empty() ? "" : ":\n" + log_));
    }
    const std::string& log() const { return log_; }
    std::string lowered_name(const std::string& expression) const {
        const char* lowered = nullptr;
        SGEMM_NVRTC_CHECK(nvrtcGetLoweredName(program_, expression.c_str(), &lowered));
        return lowered;
    }
    std::vector<char> cubin() const {
        std::size_t size = 0;
        SGEMM_NVRTC_CHECK(nvrtcGetCUBINSize(program_, &size));
        std::vector<char> out(size);
        SGEMM_NVRTC_CHECK(nvrtcGetCUBIN(program_, out.data()));
        return out;
    }

private:
    nvrtcProgram program_ = nullptr;
    std::string log_;
};
// An architecture NVRTC cannot target, said in these words rather than NVRTC's ("invalid value
// for --gpu-architecture", an option's failure): a CompileError, as the same answer would come
// every time.
void refuse_unsupported_arch(Arch arch, const std::string& what) {
    if (const std::string why = unsupported_arch_reason(arch); !why.empty())
        throw CompileError("cannot compile " + what + " for " + arch.name() + ": " + why);
}
}  // namespace

CompiledKernel compile_kernel(const Family& family, const ParamValues& values, Arch arch, KernelBuild build) {
    const std::string invalid = family.invalid_reason(values, arch);
    if (!invalid.empty())
        throw InvalidConfigError("invalid configuration " + family.describe(values) + " for " +
                                 arch.name() + ": " + invalid);

    refuse_unsupported_arch(arch, family.describe(values));

    CompiledKernel out;
    out.family = family.name;
    out.values = values;
    out.arch = arch;
    out.name_expression = family.name_expression(values);
    out.cache_key = kernel_cache_key(family, values, arch, build);
    const auto start = std::chrono::steady_clock::now();

    // Only the sources family_sources_hash covers: an include its scan missed fails here.
    Program program(render_source(family), family.name + ".cu", template_and_includes(family.template_file));
    program.add_name_expression(out.name_expression);
    const std::string second = family.second_name_expression(values);
    if (!second.empty()) program.add_name_expression(second);
    program.compile(compile_options(arch, build), out.name_expression, arch.name());
    out.log = program.log();
    out.lowered_name = program.lowered_name(out.name_expression);
    if (!second.empty()) {
        out.second_lowered_name = program.lowered_name(second);
        // Binaries read back from a database find the second kernel by this rule alone.
        if (out.second_lowered_name != family.second_symbol(values, out.lowered_name))
            throw CompileError("the second kernel " + out.second_lowered_name + " of " + out.lowered_name +
                               " is not the symbol Family::second_symbol derives");
    }
    out.cubin = program.cubin();
    out.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    out.ptxas = parse_ptxas_info(out.log);
    require_ptxas_report(out.ptxas, out.name_expression, out.log);
    return out;
}

StandaloneKernel compile_standalone(const std::string& file_name, const std::string& source,
                                    const std::vector<std::string>& defines, Arch arch,
                                    const std::string& template_file) {
    refuse_unsupported_arch(arch, file_name);
    Program program(source, file_name,
                    template_file.empty() ? std::vector<EmbeddedFile>{} : template_and_includes(template_file));
    std::vector<std::string> options = compile_options(arch);
    for (const std::string& d : defines) options.push_back("-D" + d);
    program.compile(options, file_name, arch.name());
    StandaloneKernel out;
    out.cubin = program.cubin();
    out.ptxas = parse_ptxas_info(program.log());
    require_ptxas_report(out.ptxas, file_name, program.log());
    return out;
}

void warm_up_nvrtc() {
    static std::once_flag once;
    std::call_once(once, [] {
        // NVRTC opens its built-ins library (libnvrtc-builtins.so.MAJOR.MINOR) by its bare name
        // at its first compile, a lookup that reads libnvrtc's run path (it has none) and not
        // this binary's: where the loader's cache does not know the toolkit (NVIDIA's runfile,
        // a tarball), every compile failed. Opened here, from this binary, the lookup reads
        // LD_LIBRARY_PATH and then this binary's run path (meson.build), and NVRTC finds the
        // library loaded. Kept for the process's life; not found, it is NVRTC's to report.
        int major = 0, minor = 0;
        if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
            (void)dlopen(("libnvrtc-builtins.so." + std::to_string(major) + "." + std::to_string(minor)).c_str(),
                         RTLD_NOW | RTLD_LOCAL);  // NVRTC finds it by its name; no symbol of it is for others
        // NVRTC's first compile puts back the handlers it found without their flags: SA_SIGINFO
        // and SA_ONSTACK dropped, SA_RESTART added. A host process's three-argument handler
        // would then get no siginfo, Python's Ctrl-C would no longer cut a blocking read short,
        // and Go's handlers would lose their own stack. So they are saved and put back whole.
        const int signals[] = {SIGINT, SIGTERM, SIGXFSZ};
        struct sigaction saved[3];
        for (int i = 0; i < 3; ++i) sigaction(signals[i], nullptr, &saved[i]);
        // NVRTC's own calls, not Program::compile, which comes here first. A failure is left
        // for the compile that follows to report, with its own words.
        nvrtcProgram program = nullptr;
        if (nvrtcCreateProgram(&program, "__global__ void warm_up() {}\n", "warm_up.cu", 0, nullptr, nullptr) ==
            NVRTC_SUCCESS) {
            // Not from the driver's cache either (see Program::compile): a compile found there
            // might skip the set-up that swaps the handlers, which the next compile would then do.
            const char* no_cache[] = {"--no-cache"};
            (void)nvrtcCompileProgram(program, nvrtc_caches() ? 1 : 0, no_cache);
            nvrtcDestroyProgram(&program);
        }
        for (int i = 0; i < 3; ++i) sigaction(signals[i], &saved[i], nullptr);
    });
}

}  // namespace sgemm
