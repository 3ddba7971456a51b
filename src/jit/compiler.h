// The compiler service: instantiates a family's template at a configuration, compiles it
// with NVRTC for one architecture, and returns the cubin, the lowered kernel name, the
// log, the compile time and the ptxas resource figures.
#pragma once
#include <string>
#include <vector>

#include "src/families/family.h"
#include "src/jit/arch.h"
#include "src/jit/ptxas_info.h"
#include "src/util/error.h"

namespace sgemm {

// What a build is for. Only product builds go into a database.
//   timeline          records per-block timelines (templates/sgemm_timeline.cuh) for
//                     `sgemm-bench --timeline`;
//   late_first_slice  for the GPU tests: split-K slice 0's blocks of an atomic sum
//                     (SGEMM_SUM_BY_ATOMICS) or of turns on C (SGEMM_SUM_IN_ORDER) sleep
//                     before they first write C, so that the other slices reach their wait
//                     first (templates/sgemm_splitk.cuh).
// A build's code sits in the templates behind its macro, so product cubins do not change
// with it, but the templates' text is hashed into every stored kernel (family_sources_hash):
// adding such code makes the families whose templates include it tune afresh.
enum class KernelBuild { product, timeline, late_first_slice };

struct CompiledKernel {
    std::string family;
    ParamValues values;
    Arch arch;
    std::string name_expression;  // sgemm_async<128, 128, 8, 8, 8>
    std::string lowered_name;     // the mangled symbol to look up in the cubin
    std::string second_lowered_name;  // the second kernel's symbol (Family::second_kernel); "" without one
    std::string cache_key;        // see kernel_cache_key
    std::vector<char> cubin;
    std::string log;              // NVRTC's log, ptxas report included
    double compile_ms = 0.0;
    PtxasInfo ptxas;
};

// A configuration refused before NVRTC ran.
struct InvalidConfigError : Error {
    using Error::Error;
};

// NVRTC rejected the source; what() holds the log.
struct CompileError : Error {
    using Error::Error;
};

// "13.0": the NVRTC library this process uses.
std::string nvrtc_version();

// Runs NVRTC's one-time set-up now, once per process; every compile here calls it first. The
// first compile in a process puts SIGINT, SIGTERM and SIGXFSZ handlers of NVRTC's own in place
// for some milliseconds (a Ctrl-C then ends the process with status 4 and no message), and
// puts the ones it found back with other flags: this saves them first and puts them back whole.
// Later compiles leave the handlers alone. A tool that handles those signals itself calls this
// before it installs its handlers, so that no compile runs under NVRTC's. It also opens
// NVRTC's built-ins library through this binary's run path (compiler.cpp says why).
void warm_up_nvrtc();

// The translation unit handed to NVRTC for a family (its template is instantiated by name
// expression, so the source is the same for every configuration of the family).
std::string render_source(const Family& family);

// The NVRTC options for `arch`.
std::vector<std::string> compile_options(Arch arch, KernelBuild build = KernelBuild::product);

// Hash of the sources `family`'s kernels are built from and launched by: its template and
// the templates it includes (template_sources_hash), which are all NVRTC is given to compile
// them, and the family's host code (family_host_sources_hash), which turns parameters into
// template arguments, a grid, shared memory and a workspace. A stored kernel is only reused
// by a build whose sources of its family are the same: a winner of a build whose geometry
// code differed would launch its binary on a grid it was not written for.
std::string family_sources_hash(const Family& family);

// Hash of what determines the binary: the rendered source, the family's sources
// (family_sources_hash: the templates, and the host code, since a binary row names its
// stored kernel), the name expressions (the second kernel's too), the options, the arch and
// the NVRTC version as nvrtcVersion gives it, major.minor: a patch release of NVRTC reuses the
// binaries of the release before, which run as they did. `nvrtc` is this process's unless
// given: a stored winner's key is judged by the NVRTC of its device row, which may be another.
std::string kernel_cache_key(const Family& family, const ParamValues& values, Arch arch,
                             KernelBuild build = KernelBuild::product, const std::string& nvrtc = nvrtc_version());

// Compiles; throws InvalidConfigError (before NVRTC runs) or CompileError (NVRTC refused the
// source, or ptxas gave no report, or cannot target `arch`), NvrtcError (src/cuda/check.h)
// where NVRTC itself fails (out of memory, its built-ins library missing or damaged), and
// Error where a template cannot be read.
CompiledKernel compile_kernel(const Family& family, const ParamValues& values, Arch arch,
                              KernelBuild build = KernelBuild::product);

// A kernel that is not a family's: extern "C" kernels of a source of their own, such as the
// timing's instruction-cache evictor.
struct StandaloneKernel {
    std::vector<char> cubin;
    PtxasInfo ptxas;
};

// Compiles `source` for `arch` with the product options and a -D for each of `defines`
// ("NAME=VALUE"); throws CompileError, or Error as compile_kernel does. `source` may
// #include `template_file`, one of templates/, and what that includes ("" for none), as a
// test's kernel that reuses the families' arguments and epilogue does.
StandaloneKernel compile_standalone(const std::string& file_name, const std::string& source,
                                    const std::vector<std::string>& defines, Arch arch,
                                    const std::string& template_file = "");

}  // namespace sgemm
