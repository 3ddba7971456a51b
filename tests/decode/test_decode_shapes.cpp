#include <gtest/gtest.h>

#include <sstream>

#include "src/util/error.h"
#include "tuner/decode/decode_shapes.h"

using namespace sgemm;

namespace {

struct Expected {
    const char* name;
    long n, k, weight;
};

void expect_gemms(const std::vector<DecodeGemm>& got, long batch, const std::vector<Expected>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].name, want[i].name) << "row " << i;
        EXPECT_EQ(got[i].m, batch) << want[i].name;
        EXPECT_EQ(got[i].n, want[i].n) << want[i].name;
        EXPECT_EQ(got[i].k, want[i].k) << want[i].name;
        EXPECT_EQ(got[i].weight, want[i].weight) << want[i].name;
    }
}

}  // namespace

// Llama-3-8B: hidden 4096, 32 heads and 8 KV heads of 128, MLP 14336, vocab 128256, 32 layers.
TEST(DecodeShapes, Llama3Fused) {
    expect_gemms(decode_gemms(find_builtin_model("llama-3-8b"), 8, true), 8,
                 {
                     {"qkv", 6144, 4096, 32},        // (32 + 2 * 8) * 128 = 6144
                     {"o", 4096, 4096, 32},          // 32 * 128 = 4096 in, hidden out
                     {"gate_up", 28672, 4096, 32},   // 2 * 14336
                     {"down", 4096, 14336, 32},
                     {"lm_head", 128256, 4096, 1},   // once per step, not per layer
                 });
}

TEST(DecodeShapes, Llama3SeparateProjectionsShareRowsByShape) {
    expect_gemms(decode_gemms(find_builtin_model("llama-3-8b"), 1, false), 1,
                 {
                     {"q/o", 4096, 4096, 64},       // q: 4096 x 4096 is o's shape: 2 * 32 calls
                     {"k/v", 1024, 4096, 64},       // 8 * 128 = 1024, two projections per layer
                     {"gate/up", 14336, 4096, 64},
                     {"down", 4096, 14336, 32},
                     {"lm_head", 128256, 4096, 1},
                 });
}

// Mistral-7B: Llama-3-8B's layers with a 32000-token vocabulary.
TEST(DecodeShapes, Mistral7bFused) {
    expect_gemms(decode_gemms(find_builtin_model("mistral-7b"), 32, true), 32,
                 {
                     {"qkv", 6144, 4096, 32},
                     {"o", 4096, 4096, 32},
                     {"gate_up", 28672, 4096, 32},
                     {"down", 4096, 14336, 32},
                     {"lm_head", 32000, 4096, 1},
                 });
}

// GPT-2: hidden 768, 12 heads of 64 (no GQA), MLP 3072 without a gate, vocab 50257, 12 layers.
TEST(DecodeShapes, Gpt2FusedAndSeparate) {
    const ModelConfig gpt2 = find_builtin_model("gpt2");
    expect_gemms(decode_gemms(gpt2, 1, true), 1,
                 {
                     {"qkv", 2304, 768, 12},   // 3 * 768, GPT-2's c_attn
                     {"o", 768, 768, 12},
                     {"up", 3072, 768, 12},    // no gate: fusing changes nothing here
                     {"down", 768, 3072, 12},
                     {"lm_head", 50257, 768, 1},
                 });
    expect_gemms(decode_gemms(gpt2, 4, false), 4,
                 {
                     {"q/k/v/o", 768, 768, 48},  // four 768 x 768 projections in 12 layers
                     {"up", 3072, 768, 12},
                     {"down", 768, 3072, 12},
                     {"lm_head", 50257, 768, 1},
                 });
}

TEST(DecodeShapes, FusingKeepsTheWorkPerStep) {
    // Fused or not, a step multiplies the same weights: sum of N * K * weight agrees.
    for (const ModelConfig& model : builtin_models()) {
        long fused = 0, separate = 0;
        for (const DecodeGemm& g : decode_gemms(model, 1, true)) fused += g.n * g.k * g.weight;
        for (const DecodeGemm& g : decode_gemms(model, 1, false)) separate += g.n * g.k * g.weight;
        EXPECT_EQ(fused, separate) << model.name;
    }
}

TEST(DecodeShapes, RejectsABatchBelowOne) {
    EXPECT_THROW(decode_gemms(find_builtin_model("gpt2"), 0, true), Error);
}

TEST(DecodeShapes, WritesTheTunersCsv) {
    std::ostringstream out;
    write_shapes_csv(out, decode_gemms(find_builtin_model("gpt2"), 8, true), WeightLayout::in_out, {"first comment", "second"});
    std::istringstream in(out.str());
    std::string line;
    std::vector<std::string> lines;
    while (std::getline(in, line)) lines.push_back(line);
    ASSERT_EQ(lines.size(), 2u + 1u + 5u);
    EXPECT_EQ(lines[0], "# first comment");
    EXPECT_EQ(lines[1], "# second");
    EXPECT_EQ(lines[2], "M,N,K,transA,transB,precision,weight,name");
    EXPECT_EQ(lines[3], "8,2304,768,N,N,fp32,12,qkv");
    EXPECT_EQ(lines[7], "8,50257,768,N,N,fp32,1,lm_head");
}

// The CSV's lines, the header first (no comments).
std::vector<std::string> csv_lines(const std::vector<DecodeGemm>& gemms, WeightLayout layout) {
    std::ostringstream out;
    write_shapes_csv(out, gemms, layout, {});
    std::istringstream in(out.str());
    std::string line;
    std::vector<std::string> lines;
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

// Weights kept out x in (Hugging Face's layout) make NT rows: the same sizes, B transposed.
TEST(DecodeShapes, WeightsStoredOutByInMakeNtRows) {
    const std::vector<std::string> lines = csv_lines(decode_gemms(find_builtin_model("llama-3-8b"), 8, true), WeightLayout::out_in);
    ASSERT_EQ(lines.size(), 1u + 5u);
    EXPECT_EQ(lines[0], "M,N,K,transA,transB,precision,weight,name");
    EXPECT_EQ(lines[1], "8,6144,4096,N,T,fp32,32,qkv");
    EXPECT_EQ(lines[4], "8,4096,14336,N,T,fp32,32,down");
    EXPECT_EQ(lines[5], "8,128256,4096,N,T,fp32,1,lm_head");
}

// Hugging Face keeps GPT-2's layers in x out (Conv1D): in its layout they stay NN, and only
// the LM head (the token embedding, out x in) is NT.
TEST(DecodeShapes, GptTwosConvOneDLayersStayNnInHuggingFacesLayout) {
    const std::vector<std::string> lines = csv_lines(decode_gemms(find_builtin_model("gpt2"), 8, true), WeightLayout::out_in);
    ASSERT_EQ(lines.size(), 1u + 5u);
    EXPECT_EQ(lines[1], "8,2304,768,N,N,fp32,12,qkv");
    EXPECT_EQ(lines[2], "8,768,768,N,N,fp32,12,o");
    EXPECT_EQ(lines[3], "8,3072,768,N,N,fp32,12,up");
    EXPECT_EQ(lines[4], "8,768,3072,N,N,fp32,12,down");
    EXPECT_EQ(lines.back(), "8,50257,768,N,T,fp32,1,lm_head");
}

// A Conv1D layer and a linear LM head of the same shape are stored differently, so they do not
// share a GEMM, nor a row out x in; in x out both are NN rows, and one (the tuner merged the
// two with a warning).
TEST(DecodeShapes, WeightsStoredDifferentlyDoNotShareARow) {
    ModelConfig model = find_builtin_model("gpt2");
    model.vocab_size = model.intermediate_size;  // the LM head now has up's shape
    const std::vector<DecodeGemm> gemms = decode_gemms(model, 1, true);
    ASSERT_EQ(gemms.size(), 5u);
    EXPECT_EQ(gemms[2].name, "up");
    EXPECT_EQ(gemms[4].name, "lm_head");
    EXPECT_TRUE(gemms[2].stored_in_out);
    EXPECT_FALSE(gemms[4].stored_in_out);
    // Out x in they are an NN row and an NT row; in x out both are NN, and so one row.
    EXPECT_EQ(csv_lines(gemms, WeightLayout::out_in).size(), 1u + 5u);
    const std::vector<std::string> in_out = csv_lines(gemms, WeightLayout::in_out);
    ASSERT_EQ(in_out.size(), 1u + 4u);
    EXPECT_EQ(in_out[3], "1,3072,768,N,N,fp32,13,up/lm_head");
}
