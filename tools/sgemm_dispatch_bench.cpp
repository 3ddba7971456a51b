// sgemm-dispatch-bench: what libsgemm_dispatch costs on top of the kernels it launches.
//
//   host overhead   host time per sgemm_dispatch_gemm call against a bare cudaLaunchKernel of
//                   the very kernel and launch dispatch chose (or a bare cublasSgemm when it
//                   chose cuBLAS), in batches of --calls, alternating, median of --rounds
//                   (target: at most 1 us more);
//   back-to-back    --calls tiny GEMMs in a row on one stream, CUDA events around them: time
//                   per call with dispatch against cuBLAS alone (target: no slower than
//                   cuBLAS, about 5.9 us a call on the H200);
//   cold start      create's time and its phases (target: at most 50 ms for 15 cached
//                   winners), once with the CUDA context still to make and once after.
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include <sgemm/dispatch.hpp>

#include "db/default_path.h"
#include "db/shape_key.h"
#include "src/cuda/cublas_handle.h"
#include "src/cuda/device.h"
#include "src/cuda/device_buffer.h"
#include "src/cuda/stream.h"
#include "src/dispatch/c_api.h"
#include "src/util/json.h"
#include "src/util/text.h"
#include "tools/cli_output.h"
#include "tools/cli_database_path.h"
#include "tools/cli_parse.h"
#include "tuner/gemm_problem.h"
#include "tuner/timing.h"

namespace po = boost::program_options;
using namespace sgemm;

namespace {

using Clock = std::chrono::steady_clock;

// --calls' and --rounds' ceiling, as sgemm-bench's --iters: a count near INT_MAX would run for
// days, and a batch of millions of calls fills the launch queue, so that the host's time per
// call becomes the device's and says nothing of dispatch's overhead.
constexpr int kMostCalls = 100000;
constexpr int kMostRounds = 100000;

// Host microseconds per call of `call`, over `calls` calls; the stream is drained before and
// after, outside the timing.
double host_us_per_call(const std::function<void()>& call, int calls, const Stream& stream) {
    stream.synchronize();
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < calls; ++i) call();
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    stream.synchronize();
    return us / calls;
}

// Device microseconds per call of `call` issued back to back, `calls` of them between two
// events.
double device_us_per_call(const std::function<void()>& call, int calls, const Stream& stream) {
    Event start, stop;
    stream.synchronize();
    start.record(stream.get());
    for (int i = 0; i < calls; ++i) call();
    stop.record(stream.get());
    return 1000.0 * stop.elapsed_since(start) / calls;
}

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(status));
}
void check(sgemm_dispatch_status_t status) {
    if (status != SGEMM_DISPATCH_SUCCESS) throw DispatchError(status);
}

// A result that fails its check: the tool's measurement is void, and the database (or the
// library) is at fault, not the machine; sgemm-bench gives the same status.
struct WrongResult : Error {
    using Error::Error;
};
constexpr int kWrongResult = 3;

}  // namespace

int main(int argc, char** argv) {
    po::options_description opts(
        "sgemm-dispatch-bench: the host overhead of libsgemm_dispatch over a bare launch of the same kernel,\n"
        "back-to-back tiny GEMMs with dispatch against cuBLAS, and create's cold-start time.\n\n"
        "The tiny GEMM runs what the database says for its shape: tune it first for a tuned kernel, e.g.\n"
        "  printf 'M,N,K\\n1,64,64\\n' > tiny.csv && sgemm-tune --shapes tiny.csv\n\n"
        "Usage: sgemm-dispatch-bench [--db PATH] [--m 1 --n 64 --k 64] [--trans NT] [--json FILE]\n\n"
        "Exit status: 0 a valid result, 1 bad arguments, 2 no GPU, no database or another environment\n"
        "error, 3 dispatch computed a wrong result (as sgemm-bench's 3).\n\nOptions");
    opts.add_options()("help,h", "show this help")
        ("db", po::value<std::string>(), (std::string("tuning database; default: ") + kDefaultDbPathRule).c_str())
        ("device", po::value<int>()->default_value(0), "CUDA device ordinal (the library's options.device)")
        ("fallback", po::value<std::string>()->default_value("cublas"), "cublas, builtin or error")
        ("m", po::value<int>()->default_value(1), "M of the GEMM")
        ("n", po::value<int>()->default_value(64), "N of the GEMM")
        ("k", po::value<int>()->default_value(64), "K of the GEMM")
        ("trans", po::value<std::string>()->default_value("NN"),
         "how A and B are stored: NN, NT, TN or TT (A as K x M with T first, B as N x K with T second; NT is "
         "x * W^T with the weights kept out x in)")
        ("calls", po::value<int>()->default_value(200), ("calls per timed batch, at most " + std::to_string(kMostCalls)).c_str())
        ("rounds", po::value<int>()->default_value(31),
         ("timed batches, at most " + std::to_string(kMostRounds) + "; the median is reported (of an even count, "
          "the mean of the middle two)").c_str())
        ("without-database", "a missing database is no error: every call takes the fallback (dispatch's overhead "
         "before anything is tuned; the library's options.without_database). So is one that cannot be read "
         "(a folder, a damaged, foreign or newer file), or no default path: check --db's spelling")
        ("json", po::value<std::string>(), "also write the results as JSON to this file");
    std::string db_path, json_path;
    sgemm_dispatch_options_t options = Dispatch::default_options();
    int M = 0, N = 0, K = 0, calls = 0, rounds = 0;
    ShapeKey layout;  // only its transposes
    try {
        po::variables_map vm;
        if (!parse_or_print_help(argc, argv, opts, vm)) return finish_standard_output("sgemm-dispatch-bench", "the help");
        options.without_database = vm.count("without-database") > 0;
        options.device = vm["device"].as<int>();
        if (options.device < 0) throw po::error("--device must be 0 or more (a CUDA device ordinal)");
        try {
            db_path = database_path(vm);
        } catch (const Error&) {  // no default path (no SGEMM_DB and no home): db_path stays empty
            // With the fallback alone that is no error either, as in the library.
            if (!options.without_database) throw;
        }
        const std::string fallback = chosen_word(vm["fallback"].as<std::string>());
        if (fallback != "cublas" && fallback != "builtin" && fallback != "error")
            throw po::error("--fallback is cublas, builtin or error, not " + single_quoted(vm["fallback"].as<std::string>()));
        options.fallback = fallback == "cublas"    ? SGEMM_DISPATCH_FALLBACK_CUBLAS
                           : fallback == "builtin" ? SGEMM_DISPATCH_FALLBACK_BUILTIN
                                                   : SGEMM_DISPATCH_FALLBACK_ERROR;
        M = vm["m"].as<int>(), N = vm["n"].as<int>(), K = vm["k"].as<int>();
        option_value([&] { return parse_transposes(vm["trans"].as<std::string>(), layout); });
        calls = vm["calls"].as<int>(), rounds = vm["rounds"].as<int>();
        for (const auto& [option, value] : {std::pair<const char*, int>{"m", M}, {"n", N}, {"k", K}, {"calls", calls},
                                             {"rounds", rounds}})
            if (value < 1) throw po::error(std::string("--") + option + " must be at least 1, not " + std::to_string(value));
        if (calls > kMostCalls) throw po::error("--calls must be at most " + std::to_string(kMostCalls) + ", not " + std::to_string(calls));
        if (rounds > kMostRounds)
            throw po::error("--rounds must be at most " + std::to_string(kMostRounds) + ", not " + std::to_string(rounds));
        if (vm.count("json")) {
            json_path = vm["json"].as<std::string>();
            if (!db_path.empty())  // read when it exists, --without-database or not; first, for its message
                check_output_is_not_database(json_path, "json", db_path);
            check_output_file(json_path, "json");
        }
    } catch (const po::error& e) {  // the command line itself: point to the options, as the other tools do
        std::fprintf(stderr, "sgemm-dispatch-bench: %s\nTry 'sgemm-dispatch-bench --help'.\n", usage_error_text(e).c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sgemm-dispatch-bench: %s\n", printable_lines(e.what()).c_str());
        return 1;
    }
    options.db_path = db_path.empty() ? nullptr : db_path.c_str();

    try {
        // Cold start: the first create makes the CUDA context; the second finds it made.
        const Dispatch cold(options);
        const sgemm_dispatch_info_t first = cold.info();
        const Dispatch dispatch(options);
        const sgemm_dispatch_info_t info = dispatch.info();
        // The bench's own buffers, stream and cuBLAS handle on the handle's device (after the
        // creates, whose cold start includes making its context): dispatch refuses calls from
        // another.
        use_device(options.device);

        Stream stream;
        const CublasHandle cublas;
        ProblemSpec spec;
        spec.M = M, spec.N = N, spec.K = K;
        spec.trans_a = layout.trans_a, spec.trans_b = layout.trans_b;
        const std::string shape =
            std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + " " + layout.transposes();
        // A shape past the GPU's (or the host's) memory fails here, at its operands: the
        // message names the shape, not only the allocation that failed.
        GemmProblem problem = [&] {
            try {
                return GemmProblem(spec, cublas, stream.get());
            } catch (const std::exception& e) {
                throw Error("the operands of " + shape + ", their reference and its bound: " + e.what());
            }
        }();
        SgemmArgs args = problem.args();
        const std::string decision = dispatch.explain(layout.trans_a, layout.trans_b, M, N, K, args.A, args.lda, args.B,
                                                      args.ldb, args.C, args.ldc);
        const sgemm_dispatch_op_t op_a = layout.trans_a ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N;
        const sgemm_dispatch_op_t op_b = layout.trans_b ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N;

        // The plan dispatch made for the call, to launch bare.
        GemmCall call{op_a, op_b, M, N, K, 1.0f, 0.0f, args.A, args.lda, args.B, args.ldb, args.C, args.ldc};
        ShapeKey key;
        check(check_call(call, options.precision == SGEMM_DISPATCH_TF32 ? GemmPrecision::tf32 : GemmPrecision::fp32,
                         key));
        const Plan* plan = nullptr;
        if (dispatcher_of(dispatch.get())->plan(key, plan) != SGEMM_DISPATCH_SUCCESS)
            throw Error(sgemm_dispatch_last_error());
        if (plan->route == Route::Refuse) throw Error("dispatch has no kernel for this shape (--fallback error)");
        problem.reserve_workspace(plan->launch.workspace_bytes);
        args = problem.args();
        DeviceBuffer<unsigned char> cublas_workspace(32u << 20);
        if (cublas.bind(stream.get(), cublas_workspace.data(), cublas_workspace.bytes()) != CUBLAS_STATUS_SUCCESS)
            throw Error("cublasSetStream / cublasSetWorkspace failed");

        const auto with_dispatch = [&] {
            check(sgemm_dispatch_gemm(dispatch.get(), op_a, op_b, M, N, K, 1.0f, args.A, args.lda, args.B, args.ldb, 0.0f,
                                      args.C, args.ldc, stream.get()));
        };
        const auto cublas_alone = [&] {
            if (cublas.sgemm_on_bound_stream(args, layout.trans_a, layout.trans_b) != CUBLAS_STATUS_SUCCESS)
                throw Error("cublasSgemm");
        };
        // The same launch as dispatch's, with nothing around it.
        const auto bare = [&] {
            if (plan->route == Route::Cublas) return cublas_alone();
            check(plan->launch.launch(args, stream.get()), "cudaLaunchKernel");
        };

        problem.poison_output(stream.get());
        with_dispatch();
        const Accuracy accuracy = problem.check_output();
        if (!accuracy.ok()) throw WrongResult("dispatch computed a wrong result: " + accuracy.verdict());

        for (int warm = 0; warm < 3; ++warm) {  // warm-up: first launches, clocks
            host_us_per_call(bare, calls, stream);
            host_us_per_call(with_dispatch, calls, stream);
            host_us_per_call(cublas_alone, calls, stream);
        }
        std::vector<double> host_bare, host_dispatch, dev_dispatch, dev_cublas;
        for (int r = 0; r < rounds; ++r) {
            host_bare.push_back(host_us_per_call(bare, calls, stream));
            host_dispatch.push_back(host_us_per_call(with_dispatch, calls, stream));
            dev_dispatch.push_back(device_us_per_call(with_dispatch, calls, stream));
            dev_cublas.push_back(device_us_per_call(cublas_alone, calls, stream));
        }
        const double hb = median_of(host_bare), hd = median_of(host_dispatch);
        const double dd = median_of(dev_dispatch), dc = median_of(dev_cublas);
        const std::string baseline = plan->route == Route::Cublas ? "bare cublasSgemm" : "bare cudaLaunchKernel";

        // explain's database line: "PATH: N winners of this device", or, where the handle reads
        // none (--without-database over a missing or damaged file), "not used (WHY): ...": then
        // the path is not the database the calls went through, as the header said it was.
        const std::size_t database_at = decision.find("\ndatabase  ");
        const std::string database_line =
            database_at == std::string::npos
                ? ""
                : decision.substr(database_at + 11, decision.find('\n', database_at + 1) - database_at - 11);
        const bool database_used = database_line.rfind("not used", 0) != 0;
        std::printf("sgemm-dispatch-bench: %s, database %s\n", dispatcher_of(dispatch.get())->device().name.c_str(),
                    !database_used    ? database_line.c_str()
                    : db_path.empty() ? "none (no default path)"
                                      : printable(db_path).c_str());
        std::printf("%s\n", decision.substr(0, decision.find("\ndevice")).c_str());
        std::printf("\n%-52s %12s %12s %12s   %s\n", "measure", "dispatch", "baseline", "difference", "target");
        std::printf("%-52s %9.3f us %9.3f us %+9.3f us   at most +1 us\n",
                    ("host time per call " + shape + " (vs " + baseline + ")").c_str(), hd, hb, hd - hb);
        std::printf("%-52s %9.3f us %9.3f us %11.2fx   at most 1.00x\n",
                    ("back-to-back " + shape + ", time per call (vs cuBLAS)").c_str(), dd, dc, dd / dc);
        std::printf("%-52s %9.1f ms %12s %12s\n", "create, CUDA context included", first.create_ms, "", "");
        std::printf("%-52s %9.1f ms %12s %12s   at most 50 ms for 15 winners\n",
                    ("create, context made: " + std::to_string(info.winners) + " winners, " +
                     std::to_string(info.kernels_compiled) + " compiled").c_str(),
                    info.create_ms, "", "");
        std::printf("  create's phases: device %.1f ms, database %.1f ms, kernels %.1f ms (NVRTC %.1f ms), "
                    "workspaces and cuBLAS handles %.1f ms\n",
                    info.device_ms, info.database_ms, info.kernels_ms, info.compile_ms, info.memory_ms);

        const int written = finish_standard_output_after_work("sgemm-dispatch-bench", "standard output");
        if (!json_path.empty()) {
            Json doc = Json::object();
            doc.set("gpu", dispatcher_of(dispatch.get())->device().name)
                .set("database", db_path.empty() || !database_used ? Json() : Json(db_path))
                .set("database_not_used", database_used ? Json() : Json(database_line))
                .set("shape", Json::object().set("m", M).set("n", N).set("k", K).set("trans", layout.transposes()))
                .set("decision", decision)
                .set("calls_per_batch", calls)
                .set("rounds", rounds)
                .set("host_us_per_call", Json::object().set("dispatch", hd).set("bare", hb).set("baseline", baseline))
                .set("overhead_us", hd - hb)
                .set("back_to_back_us_per_call", Json::object().set("dispatch", dd).set("cublas", dc))
                .set("create_ms", Json::object()
                                      .set("with_context", first.create_ms)
                                      .set("context_made", info.create_ms)
                                      .set("device", info.device_ms)
                                      .set("database", info.database_ms)
                                      .set("kernels", info.kernels_ms)
                                      .set("compile", info.compile_ms)
                                      .set("memory", info.memory_ms))
                .set("winners", info.winners)
                .set("kernels_compiled", info.kernels_compiled);
            write_output_file(json_path, doc.dump() + "\n");
        }
        return written;
    } catch (const DispatchError& e) {  // no GPU, no database: the environment
        std::fprintf(stderr, "sgemm-dispatch-bench: %s%s\n", printable_lines(e.what()).c_str(),
                     e.status() == SGEMM_DISPATCH_DATABASE_ERROR ? "; with this tool, that option is --without-database" : "");
        return 2;
    } catch (const WrongResult& e) {
        std::fprintf(stderr, "sgemm-dispatch-bench: %s\n", printable_lines(e.what()).c_str());
        return kWrongResult;
    } catch (const std::exception& e) {  // a CUDA failure: the environment
        std::fprintf(stderr, "sgemm-dispatch-bench: %s\n", printable_lines(e.what()).c_str());
        return 2;
    }
}
