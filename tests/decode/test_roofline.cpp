#include <gtest/gtest.h>

#include "src/util/error.h"
#include "tuner/decode/roofline.h"

using namespace sgemm;

namespace {

DecodeSetup setup_for(const char* model, const char* gpu, Precision weights, long context) {
    DecodeSetup s;
    s.model = find_builtin_model(model);
    s.gpu = find_builtin_gpu(gpu);
    s.weights = weights;
    s.context = context;
    return s;
}

}  // namespace

TEST(Roofline, Fp32GemmFloorByHand) {
    // 8 x 6144 x 4096 (Llama-3-8B's QKV at batch 8), fp32 on the H200 (66.9 TFLOPS, 4.29 TB/s):
    //   FLOPs = 2 * 8 * 6144 * 4096                       = 402,653,184
    //   bytes = 4 * (6144 * 4096 + 8 * 4096 + 8 * 6144)   = 4 * 25,247,744 = 100,990,976
    //   compute = 402,653,184 / 66.9e12 = 6.019 us; memory = 100,990,976 / 4.29e12 = 23.541 us
    const Traffic t = gemm_traffic(8, 6144, 4096, 4, 4);
    EXPECT_DOUBLE_EQ(t.flops, 402653184.0);
    EXPECT_DOUBLE_EQ(t.bytes, 100990976.0);
    const GpuSpec h200 = find_builtin_gpu("H200");
    const double peak = h200.peak_flops(Precision::fp32), bandwidth = h200.bytes_per_s();
    EXPECT_NEAR(floor_seconds(t, peak, bandwidth), 23.541e-6, 0.001e-6);
    // A large square GEMM is compute-bound: 2 * 4096^3 / 66.9e12 = 2.0544 ms.
    EXPECT_NEAR(floor_seconds(gemm_traffic(4096, 4096, 4096, 4, 4), peak, bandwidth), 2.0544e-3, 0.0001e-3);
}

TEST(Roofline, Gpt2StepByHand) {
    // GPT-2, fp32, H200, batch 1, context 1024. Per layer (x12), bytes = 4 * (weights + in + out):
    //   qkv  1x2304x768: FLOPs 3,538,944  bytes 4 * (1,769,472 + 768 + 2304)  = 7,090,176
    //   o    1x768x768:  FLOPs 1,179,648  bytes 4 * (589,824 + 768 + 768)     = 2,365,440
    //   up   1x3072x768: FLOPs 4,718,592  bytes 4 * (2,359,296 + 768 + 3072)  = 9,452,544
    //   down 1x768x3072: FLOPs 4,718,592  bytes 9,452,544
    //   attn_qk: FLOPs 2 * 768 * 1024 = 1,572,864; bytes 4 * (1024 * 768 K cache + 768 q) = 3,148,800
    //   attn_pv: the same (V cache, output)
    // once: lm_head 1x50257x768: FLOPs 77,194,752  bytes 4 * (38,597,376 + 768 + 50257) = 154,593,604
    // Step: FLOPs = 12 * 17,301,504 + 77,194,752 = 284,812,800
    //       bytes = 12 * 34,658,304 + 154,593,604 = 570,493,252
    // Every kernel is far under the ridge (66.9 / 4.29 = 15.6 FLOP/B), so the step takes
    // 570,493,252 / 4.29e12 = 132.982 us: 7519.8 tokens/s.
    const StepRoofline step = decode_step(setup_for("gpt2", "H200", Precision::fp32, 1024), 1);
    ASSERT_EQ(step.rows.size(), 7u);
    EXPECT_DOUBLE_EQ(step.flops, 284812800.0);
    EXPECT_DOUBLE_EQ(step.bytes, 570493252.0);
    for (const RooflineRow& row : step.rows) EXPECT_FALSE(row.compute_bound()) << row.name;
    EXPECT_NEAR(step.time_s, 132.982e-6, 0.001e-6);
    EXPECT_NEAR(step.tokens_per_s, 7519.8, 0.1);
    EXPECT_FALSE(step.compute_bound());
}

TEST(Roofline, StepTotalsAreTheWeightedRows) {
    const DecodeSetup setup = setup_for("llama-3-8b", "A100-80GB", Precision::bf16, 2048);
    const StepRoofline step = decode_step(setup, 16);
    double flops = 0, time = 0;
    for (const RooflineRow& r : step.rows) {
        flops += r.weight * r.per_call.flops;
        time += r.weight * floor_seconds(r.per_call, r.peak_flops, setup.gpu.bytes_per_s());
    }
    EXPECT_DOUBLE_EQ(step.flops, flops);
    EXPECT_NEAR(step.time_s, time, 1e-12);
    EXPECT_DOUBLE_EQ(step.tokens_per_s, 16 / step.time_s);
}

TEST(Roofline, NoBatchMakesH100Fp16Llama3DecodeComputeBoundAtContext4096) {
    const DecodeSetup setup = setup_for("llama-3-8b", "H100 SXM", Precision::fp16, 4096);
    const BatchLimit limit = compute_bound_batch(setup);
    EXPECT_FALSE(limit.batch.has_value()) << "compute-bound from batch " << *limit.batch;
    // The tool's own steps agree, up to batches far past any real deployment.
    for (long batch = 1; batch <= (1L << 20); batch *= 2)
        EXPECT_FALSE(decode_step(setup, batch).compute_bound()) << "batch " << batch;
    // The KV cache is what keeps it memory-bound: without it, the same model and GPU turn
    // compute-bound, so this test would see a batch if the cache were not counted.
    DecodeSetup no_cache = setup;
    no_cache.context = 0;
    const BatchLimit without = compute_bound_batch(no_cache);
    ASSERT_TRUE(without.batch.has_value());
    EXPECT_TRUE(decode_step(no_cache, *without.batch).compute_bound());
    EXPECT_FALSE(decode_step(no_cache, *without.batch - 1).compute_bound());
}

TEST(Roofline, ComputeBoundBatchIsTheFirstOne) {
    // fp32 on the H200 with a short context turns compute-bound at a modest batch; the answer
    // must be the first compute-bound step.
    const DecodeSetup setup = setup_for("llama-3-8b", "H200", Precision::fp32, 128);
    const BatchLimit limit = compute_bound_batch(setup);
    ASSERT_TRUE(limit.batch.has_value());
    ASSERT_GT(*limit.batch, 1);
    EXPECT_TRUE(decode_step(setup, *limit.batch).compute_bound());
    for (long batch = 1; batch < *limit.batch; ++batch)
        EXPECT_FALSE(decode_step(setup, batch).compute_bound()) << "batch " << batch;
}

TEST(Roofline, ComputeBoundBatchFarAwayIsFoundQuickly) {
    // A GPU whose peak nearly balances compute and memory per sequence puts the crossing near
    // a batch of 10^12: stepping one batch at a time from the estimate never ended.
    DecodeSetup setup = setup_for("llama-3-8b", "H200", Precision::fp32, 4096);
    setup.gpu.fp32_tflops = 15.8239098014040646;
    setup.gpu.bandwidth_tbs = 1;
    const BatchLimit limit = compute_bound_batch(setup);
    ASSERT_TRUE(limit.batch.has_value());
    EXPECT_TRUE(decode_step(setup, *limit.batch).compute_bound());
    EXPECT_FALSE(decode_step(setup, *limit.batch - 1).compute_bound());
}

TEST(Roofline, SlidingWindowLayersReadTheWindowTheOthersTheContext) {
    // Gemma-2 style: half the layers slide. Their rows are named apart, and only the others'
    // bytes grow past the window.
    DecodeSetup setup = setup_for("mistral-7b", "H200", Precision::fp16, 8192);
    setup.model.sliding_window_layers = 16;
    const StepRoofline step = decode_step(setup, 1);
    long window_layers = 0, full_layers = 0;
    for (const RooflineRow& row : step.rows) {
        if (row.name == "attn_qk_window") window_layers += row.weight;
        if (row.name == "attn_qk") full_layers += row.weight;
    }
    EXPECT_EQ(window_layers, 16);
    EXPECT_EQ(full_layers, 16);
    const auto bytes = [&](long context) {
        DecodeSetup s = setup;
        s.context = context;
        return decode_step(s, 1).bytes;
    };
    const DecodeSetup all_sliding = setup_for("mistral-7b", "H200", Precision::fp16, 8192);
    EXPECT_GT(bytes(8192), decode_step(all_sliding, 1).bytes);
    EXPECT_GT(bytes(16384), bytes(8192));
    EXPECT_DOUBLE_EQ(bytes(4096), decode_step(setup_for("mistral-7b", "H200", Precision::fp16, 4096), 1).bytes);
}

TEST(Roofline, SlidingWindowCapsTheKvCacheRead) {
    // Mistral-7B-v0.1 reads at most 4096 past tokens; Llama-3-8B reads them all.
    const auto bytes = [](const char* model, long context) {
        return decode_step(setup_for(model, "H200", Precision::fp16, context), 1).bytes;
    };
    EXPECT_DOUBLE_EQ(bytes("mistral-7b", 8192), bytes("mistral-7b", 4096));
    EXPECT_GT(bytes("llama-3-8b", 8192), bytes("llama-3-8b", 4096));
}

TEST(Roofline, ResidentBytesByHand) {
    // Llama-3-8B in fp16 at context 4096. Weights, 2 B each: 32 layers of qkv 4096x6144, o
    // 4096x4096, gate_up 4096x28672 and down 14336x4096, then lm_head 4096x128256: 7,504,658,432
    // of them, 15,009,316,864 bytes. KV cache per sequence: 32 layers x 4096 tokens x K and V x
    // 8 heads x 128 x 2 B = 536,870,912 bytes.
    const DecodeSetup setup = setup_for("llama-3-8b", "H100 SXM", Precision::fp16, 4096);
    const StepRoofline one = decode_step(setup, 1), many = decode_step(setup, 256);
    EXPECT_DOUBLE_EQ(one.resident_bytes, 15009316864.0 + 536870912.0);
    EXPECT_DOUBLE_EQ(many.resident_bytes, 15009316864.0 + 256 * 536870912.0);
    // The H100's 79.6 GiB hold the one sequence, not 256 of them (142 GiB).
    EXPECT_TRUE(one.fits(setup.gpu));
    EXPECT_FALSE(many.fits(setup.gpu));
    // A GPU whose memory is not known is taken to hold anything.
    GpuSpec unknown = setup.gpu;
    unknown.memory_gib = 0;
    EXPECT_TRUE(many.fits(unknown));
}

TEST(Roofline, ASlidingWindowKeepsOnlyTheWindowResident) {
    const auto resident = [](long context) {
        return decode_step(setup_for("mistral-7b", "H200", Precision::fp16, context), 8).resident_bytes;
    };
    EXPECT_DOUBLE_EQ(resident(8192), resident(4096));
    EXPECT_GT(resident(4096), resident(2048));
}

TEST(Roofline, SmallerWeightsMoveFewerBytes) {
    const auto bytes = [](Precision p) { return decode_step(setup_for("llama-3-8b", "H100 SXM", p, 0), 1).bytes; };
    EXPECT_GT(bytes(Precision::fp32), bytes(Precision::fp16));
    EXPECT_GT(bytes(Precision::fp16), bytes(Precision::int8));
}

TEST(Roofline, AssumptionsNameTheFormatsAndContext) {
    const DecodeSetup setup = setup_for("mistral-7b", "H100 SXM", Precision::int8, 1000);
    std::string all;
    for (const std::string& a : roofline_assumptions(setup)) all += a + "\n";
    EXPECT_NE(all.find("weights in int8"), std::string::npos) << all;
    EXPECT_NE(all.find("KV cache in fp16"), std::string::npos) << all;
    EXPECT_NE(all.find("32 of 32 layers attend through a sliding window of 4096 tokens: each reads 1000 past tokens"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find("every sequence's KV cache fit in the GPU's 79.6 GiB; an input embedding not tied"),
              std::string::npos)
        << all;
    EXPECT_EQ(all.find("whether a step fits is not checked"), std::string::npos) << all;
    // Without the GPU's memory, the report says that fit went unchecked.
    DecodeSetup unknown_memory = setup;
    unknown_memory.gpu.memory_gib = 0;
    all.clear();
    for (const std::string& a : roofline_assumptions(unknown_memory)) all += a + "\n";
    EXPECT_NE(all.find("the GPU's memory is not given (memory_gib): whether a step fits is not checked"),
              std::string::npos)
        << all;
}

TEST(Roofline, RejectsANegativeContext) {
    EXPECT_THROW(decode_step(setup_for("gpt2", "H200", Precision::fp32, -1), 1), Error);
}

// int8 weights leave attention and the KV cache in fp16: a GPU that gives only an int8 peak
// is refused with the reason the fp16 peak is wanted.
TEST(Roofline, Int8WeightsSayWhyTheyNeedAnFp16Peak) {
    DecodeSetup s = setup_for("gpt2", "H200", Precision::int8, 128);
    s.gpu.fp16_tflops = 0;
    s.gpu.int8_tops = 100;
    try {
        decode_step(s, 1);
        FAIL() << "a GPU without an fp16 peak ran int8 weights";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("has no fp16 peak (fp16_tflops): with int8 weights, attention and the KV "
                                             "cache are fp16"),
                  std::string::npos)
            << e.what();
    }
}
