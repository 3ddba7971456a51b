#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "src/util/error.h"
#include "tuner/decode/model_config.h"

using namespace sgemm;

namespace {

std::string fixture(const std::string& name) { return std::string(DECODE_FIXTURES) + "/" + name; }

// The Error's message when loading `name`, or "" when it loads.
std::string load_error(const std::string& name) {
    try {
        load_model_config(fixture(name));
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void expect_same_sizes(const ModelConfig& a, const ModelConfig& b) {
    EXPECT_EQ(a.hidden_size, b.hidden_size);
    EXPECT_EQ(a.intermediate_size, b.intermediate_size);
    EXPECT_EQ(a.vocab_size, b.vocab_size);
    EXPECT_EQ(a.num_attention_heads, b.num_attention_heads);
    EXPECT_EQ(a.num_key_value_heads, b.num_key_value_heads);
    EXPECT_EQ(a.head_dim, b.head_dim);
    EXPECT_EQ(a.num_hidden_layers, b.num_hidden_layers);
    EXPECT_EQ(a.gated_mlp, b.gated_mlp);
    EXPECT_EQ(a.sliding_window, b.sliding_window);
    EXPECT_EQ(a.max_positions, b.max_positions);
    EXPECT_EQ(a.conv1d_layers, b.conv1d_layers);
}

}  // namespace

TEST(ModelConfig, BuiltinsAreConsistentAndFoundIgnoringCase) {
    ASSERT_GE(builtin_models().size(), 3u);
    for (const ModelConfig& m : builtin_models()) {
        EXPECT_NO_THROW(check_model_config(m)) << m.name;
        EXPECT_FALSE(m.source.empty()) << m.name;
        EXPECT_EQ(find_builtin_model(m.name).name, m.name);
    }
    EXPECT_EQ(find_builtin_model("Llama-3-8B").name, "llama-3-8b");
}

TEST(ModelConfig, UnknownBuiltinListsTheNames) {
    try {
        find_builtin_model("llama-2-70b");
        FAIL() << "an unknown model was accepted";
    } catch (const Error& e) {
        const std::string text = e.what();
        EXPECT_NE(text.find("llama-2-70b"), std::string::npos) << text;
        for (const ModelConfig& m : builtin_models()) EXPECT_NE(text.find(m.name), std::string::npos) << text;
    }
}

// The fixtures are the models' published config.json files (trimmed of nothing that matters),
// so each must give the same sizes as its built-in.
TEST(ModelConfig, HuggingFaceConfigsMatchTheBuiltins) {
    expect_same_sizes(load_model_config(fixture("llama3_8b_config.json")), find_builtin_model("llama-3-8b"));
    expect_same_sizes(load_model_config(fixture("mistral_7b_config.json")), find_builtin_model("mistral-7b"));
    // GPT-2 names its sizes n_embd, n_head, n_layer, and n_inner: null means 4 * n_embd.
    expect_same_sizes(load_model_config(fixture("gpt2_config.json")), find_builtin_model("gpt2"));
}

// The MLP's gate comes from model_type: StarCoder2 (an up projection 4x wide, no gate) is not
// read as a Llama-style gated MLP, which would double its first MLP GEMM.
TEST(ModelConfig, TheModelTypeSaysWhetherTheMlpHasAGate) {
    const ModelConfig starcoder2 = load_model_config(fixture("starcoder2_3b_config.json"));
    EXPECT_FALSE(starcoder2.gated_mlp);
    EXPECT_EQ(starcoder2.intermediate_size, 12288);
    EXPECT_TRUE(load_model_config(fixture("llama3_8b_config.json")).gated_mlp);
    EXPECT_TRUE(load_model_config(fixture("dense_with_one_expert.json")).gated_mlp);  // Hunyuan
}

// A type the tool does not know is refused, naming the field and the way out, unless the
// caller says whether the MLP is gated.
TEST(ModelConfig, AnUnknownModelTypeIsRefusedUnlessTheGateIsGiven) {
    const std::string message = load_error("unknown_mlp_type.json");
    for (const char* part : {"'model_type'", "'brand_new_lm' is not a type whose MLP this tool knows", "starcoder2",
                             "--gated-mlp yes or no"})
        EXPECT_NE(message.find(part), std::string::npos) << message;
    EXPECT_TRUE(load_model_config(fixture("unknown_mlp_type.json"), true).gated_mlp);
    EXPECT_FALSE(load_model_config(fixture("unknown_mlp_type.json"), false).gated_mlp);
    // For a known type the caller's word may only agree: against it, it would give another
    // model's GEMMs.
    EXPECT_FALSE(load_model_config(fixture("starcoder2_3b_config.json"), false).gated_mlp);
    EXPECT_TRUE(load_model_config(fixture("llama3_8b_config.json"), true).gated_mlp);
    for (const auto& [file, gated, part] :
         {std::tuple{"starcoder2_3b_config.json", true, "'starcoder2' has an MLP without a gate, so --gated-mlp yes"},
          std::tuple{"llama3_8b_config.json", false, "'llama' has a gated MLP, so --gated-mlp no contradicts it"}}) {
        try {
            load_model_config(fixture(file), gated);
            ADD_FAILURE() << file << " was read against its model_type";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    }
}

// Falcon without ffn_hidden_size and CodeGen with n_inner null have MLPs 4 * hidden wide,
// as Hugging Face reads them.
TEST(ModelConfig, MlpWidthsThatDefaultToFourTimesHidden) {
    const ModelConfig falcon = load_model_config(fixture("falcon_7b_config.json"));
    EXPECT_EQ(falcon.intermediate_size, 4 * 4544);
    EXPECT_FALSE(falcon.gated_mlp);
    EXPECT_EQ(falcon.num_key_value_heads, 1);  // multi_query, true unless the config says
    const ModelConfig codegen = load_model_config(fixture("codegen_config.json"));
    EXPECT_EQ(codegen.intermediate_size, 4 * 1024);
    EXPECT_FALSE(codegen.gated_mlp);
}

// Falcon-40B's new decoder architecture has num_kv_heads KV heads (8 of 128), not one.
TEST(ModelConfig, FalconsNewDecoderArchitectureCountsItsKvHeads) {
    const ModelConfig m = load_model_config(fixture("falcon_40b_config.json"));
    EXPECT_EQ(m.num_key_value_heads, 8);
    EXPECT_EQ(m.head_dim, 64);
    EXPECT_EQ(m.intermediate_size, 4 * 8192);
    EXPECT_EQ(m.max_positions, 2048);
}

// Without model_type the gate is asked about; a bad n_positions, which feeds only a note, is
// ignored rather than refusing the config.
TEST(ModelConfig, NoModelTypeAsksAboutTheGateAndABadPositionCountIsIgnored) {
    const std::string message = load_error("no_model_type.json");
    EXPECT_NE(message.find("'model_type' is missing, and it says whether the MLP has a gate"), std::string::npos)
        << message;
    const ModelConfig m = load_model_config(fixture("no_model_type.json"), true);
    EXPECT_EQ(m.max_positions, 0);
    EXPECT_EQ(m.intermediate_size, 8192);
}

TEST(ModelConfig, ExplicitHeadDimNeedNotDivideHidden) {
    // 16 heads of 256 = 4096 wide attention on a 3072 hidden size, as in Gemma-7B.
    const ModelConfig m = load_model_config(fixture("head_dim_config.json"));
    EXPECT_EQ(m.name, "gemma-7b-like");
    EXPECT_EQ(m.head_dim, 256);
    EXPECT_EQ(m.hidden_size, 3072);
    EXPECT_TRUE(m.gated_mlp);
}

TEST(ModelConfig, BadConfigsNameTheField) {
    struct Case {
        const char* file;
        const char* words[2];  // each must appear in the message
    };
    const Case cases[] = {
        {"bad_missing_hidden_size.json", {"'hidden_size'", "missing"}},
        {"bad_heads_do_not_divide.json", {"num_attention_heads", "does not divide hidden_size"}},
        {"bad_kv_heads.json", {"num_key_value_heads", "does not divide num_attention_heads"}},
        {"bad_fractional_size.json", {"'intermediate_size'", "positive integer"}},
        {"bad_null_vocab.json", {"'vocab_size'", "null"}},
        {"bad_string_size.json", {"'hidden_size'", "must be a number, not a string (\"4096\")"}},
        {"bad_duplicate_key.json", {"bad_duplicate_key.json", "field 'hidden_size' is given twice"}},
        {"bad_not_an_object.json", {"bad_not_an_object.json", "expected a JSON object ({...}) of fields, found an array"}},
        {"bad_truncated.json", {"bad_truncated.json", "not valid JSON"}},
        {"no_such_file.json", {"no_such_file.json", "cannot open"}},
        {"bad_mixture_of_experts.json", {"'num_local_experts'", "a mixture of experts (Mixtral style)"}},
        {"bad_latent_attention.json", {"'kv_lora_rank'", "multi-head latent attention"}},
        // ERNIE's experts, and a count given as text, passed as a dense model's MLP.
        {"bad_ernie_mixture_of_experts.json", {"'moe_num_experts'", "a mixture of experts (ERNIE style)"}},
        {"bad_expert_count_as_text.json", {"'num_local_experts'", "must be a number or null"}},
        // Types whose Hugging Face defaults are their own (Gemma-2's head_dim of 256, Mistral's
        // 8 KV heads): the rule for a whole config.json gave Gemma-2-9B 224 and Mistral 32.
        {"bad_head_dim_left_to_defaults.json", {"field 'head_dim' is missing, and a gemma2 model's default is its type's own", "does not guess"}},
        {"bad_qwen_odd_intermediate_size.json", {"'intermediate_size' (22015) is odd", "gate's and up projection's widths added together"}},
        {"bad_starcoder2_kv_heads_left_to_defaults.json", {"field 'num_key_value_heads' is missing, and a starcoder2 model's default", "does not guess"}},
        {"bad_kv_heads_left_to_defaults.json", {"field 'num_key_value_heads' is missing, and a mistral model's default", "does not guess"}},
        {"bad_layer_types.json", {"'layer_types'", "'chunked_attention'"}},
        {"bad_hybrid_layer_types.json", {"'layer_types'", "holds 'conv'"}},
        {"bad_sliding_layers_without_window.json", {"'layer_types'", "there is no sliding_window"}},
        {"bad_huge_head_dim.json", {"qkv's width", "is 55340232221128654848, past the 32-bit GEMM dimensions"}},
        {"bad_not_utf8.json", {":1:", "bytes that are not UTF-8"}},
        // A multimodal config whose text_config leaves sizes to Hugging Face's defaults (Gemma-3 4B's).
        {"bad_text_config_left_to_defaults.json", {"text_config: field 'num_attention_heads' is missing", "does not guess"}},
        {"bad_text_config_duplicate_key.json", {"text_config: field 'hidden_size' is given twice", "text_config"}},
        // Its KV heads, head_dim and window too: Gemma-3's text model has 4 KV heads of 256 and a
        // window of 4096 by default, which the rules for a whole config.json would take for 8
        // heads of hidden_size / heads = 320 and no window.
        {"bad_text_config_kv_heads_left_to_defaults.json", {"text_config: field 'num_key_value_heads' is missing", "does not guess"}},
        {"bad_text_config_head_dim_left_to_defaults.json", {"text_config: field 'head_dim' is missing", "does not guess"}},
        {"bad_text_config_window_left_to_defaults.json",
         {"text_config: field 'sliding_window' is missing, and a gemma3_text model has a window unless it says null", "does not guess"}},
        // Untyped, the text_config is its parent's text model: gemma3's is gemma3_text.
        {"bad_untyped_text_config_window_left_to_defaults.json",
         {"text_config: field 'sliding_window' is missing, and a gemma3 model has a window unless it says null", "does not guess"}},
        // A whole config.json of such a type without the field was edited by hand: Hugging
        // Face writes it (null where there is no window) and reads its absence as 4096.
        {"bad_window_left_to_defaults.json",
         {"field 'sliding_window' is missing, and a mistral model has a window unless it says null", "add it to the config"}},
        // Types that name their sizes otherwise (OPT's ffn_dim, MPT's d_model and n_heads) are
        // refused by type, not for a field that is there under another name.
        {"bad_opt_config.json", {"field 'model_type' 'opt' is not read by this tool", "ffn_dim"}},
        {"bad_mpt_config.json", {"field 'model_type' 'mpt' is not read by this tool", "d_model"}},
        {".", {"is a folder, not a JSON file", "."}},
    };
    for (const Case& c : cases) {
        const std::string message = load_error(c.file);
        ASSERT_FALSE(message.empty()) << c.file << " was accepted";
        EXPECT_NE(message.find(c.file), std::string::npos) << "the message does not name the file: " << message;
        for (const char* word : c.words) EXPECT_NE(message.find(word), std::string::npos) << c.file << ": " << message;
    }
}

// A model that also sees images keeps its language model's sizes in text_config (Gemma-3 27B's
// layout): they are read from there, with the text model's type (gemma3_text: gated, every
// sixth layer global) and the top level's name.
TEST(ModelConfig, AMultimodalConfigIsReadFromItsTextConfig) {
    const ModelConfig m = load_model_config(fixture("gemma3_multimodal_config.json"));
    EXPECT_EQ(m.name, "gemma-3-27b-like");
    EXPECT_EQ(m.hidden_size, 5376);
    EXPECT_EQ(m.intermediate_size, 21504);
    EXPECT_EQ(m.num_attention_heads, 32);
    EXPECT_EQ(m.num_key_value_heads, 16);
    EXPECT_EQ(m.head_dim, 128);
    EXPECT_EQ(m.num_hidden_layers, 62);
    EXPECT_EQ(m.vocab_size, 262208);
    EXPECT_TRUE(m.gated_mlp);
    EXPECT_EQ(m.sliding_window, 1024);
    EXPECT_EQ(m.sliding_window_layers, 62 - 62 / 6);
}

// A text_config's null sliding_window (Mistral-3's) says there is none.
TEST(ModelConfig, ATextConfigsNullWindowSaysThereIsNone) {
    const ModelConfig m = load_model_config(fixture("mistral3_multimodal_config.json"));
    EXPECT_EQ(m.name, "mistral-3-like");
    EXPECT_EQ(m.num_key_value_heads, 8);
    EXPECT_EQ(m.head_dim, 128);
    EXPECT_EQ(m.sliding_window, 0);
    EXPECT_EQ(m.sliding_window_layers, 0);
    EXPECT_TRUE(m.gated_mlp);
}

// Mistral-3's text_config without a model_type of its own is Mistral's: gated, as the file's
// type now says (it was refused as a type whose MLP the tool did not know).
TEST(ModelConfig, AnUntypedMistral3TextConfigIsMistrals) {
    const ModelConfig m = load_model_config(fixture("mistral3_untyped_text_config.json"));
    EXPECT_EQ(m.name, "mistral-3-untyped-like");
    EXPECT_EQ(m.intermediate_size, 32768);
    EXPECT_TRUE(m.gated_mlp);
}

// Qwen (the first) writes its gate's and up projection's widths added together: Qwen-7B's
// 22016 is two projections of 11008 (read as one, its MLP was twice its size). An odd sum is
// no such pair.
TEST(ModelConfig, QwensIntermediateSizeIsItsTwoProjectionsTogether) {
    const ModelConfig m = load_model_config(fixture("qwen_7b_config.json"));
    EXPECT_EQ(m.intermediate_size, 11008);
    EXPECT_TRUE(m.gated_mlp);
    EXPECT_EQ(m.num_key_value_heads, 32);
    EXPECT_EQ(m.head_dim, 128);
}

// BLOOM's large configs name the hidden size n_embed, as Hugging Face's BloomConfig reads it
// (refused before as missing hidden_size); the MLP is 4 x hidden, without a gate.
TEST(ModelConfig, BloomsHiddenSizeMayBeNamedNEmbed) {
    const ModelConfig m = load_model_config(fixture("bloom_176b_config.json"));
    EXPECT_EQ(m.hidden_size, 14336);
    EXPECT_EQ(m.num_hidden_layers, 70);
    EXPECT_EQ(m.num_attention_heads, 112);
    EXPECT_EQ(m.num_key_value_heads, 112);
    EXPECT_EQ(m.intermediate_size, 4 * 14336);
    EXPECT_FALSE(m.gated_mlp);
}

// A text_config without a model_type takes the file's; an unknown one is then blamed on the
// file's own field, not on the text_config.
TEST(ModelConfig, AnUntypedTextConfigTakesTheFilesModelType) {
    const std::string message = load_error("bad_text_config_untyped.json");
    EXPECT_NE(message.find("bad_text_config_untyped.json: field 'model_type' 'brand_new_vlm' is not a type"),
              std::string::npos) << message;
    EXPECT_EQ(load_model_config(fixture("bad_text_config_untyped.json"), true).hidden_size, 64);
}

// Kept as given: JSON output keeps them, tables and CSV comments escape them (decode_cli.sh).
TEST(ModelConfig, ControlCharactersInTheNameAreKept) {
    EXPECT_EQ(load_model_config(fixture("control_in_name.json")).name, "org/model\nM,N,K");
}

TEST(ModelConfig, ADenseConfigMayCountOneExpert) {
    // Hunyuan-7B (dense) writes num_experts 1 and a per-layer moe_intermediate_size.
    const ModelConfig m = load_model_config(fixture("dense_with_one_expert.json"));
    EXPECT_EQ(m.intermediate_size, 14336);
}

TEST(ModelConfig, SlidingWindowsFollowEachConfigsRule) {
    struct Case {
        const char* file;
        long window, layers;
    };
    const Case cases[] = {
        {"mistral_7b_config.json", 4096, 32},           // every layer
        {"window_switched_off.json", 0, 0},             // Qwen2: use_sliding_window false
        {"window_from_layer_28.json", 4096, 4},         // layers 28 .. 31
        {"window_every_other_layer.json", 4096, 4},     // Gemma-2: layers 0, 2, 4, 6 of 7
        {"window_pattern_6.json", 512, 22},             // Gemma-3: every 6th of 26 layers sees all
        {"window_layer_types.json", 1024, 3},           // as listed
        {"window_llama_without_layer_types.json", 0, 0},  // Llama uses a window only as listed
        {"window_qwen_default_off.json", 0, 0},         // Qwen2: use_sliding_window defaults to false
        {"window_qwen_default_from_28.json", 4096, 4},  // and max_window_layers to 28
        {"window_qwen_from_layer_0.json", 4096, 32},    // 0: every layer
        {"window_gemma3_default_pattern.json", 512, 22},     // Gemma-3's pattern defaults to 6
        {"window_cohere2_default_pattern.json", 4096, 30},   // Cohere2's to 4
    };
    for (const Case& c : cases) {
        const ModelConfig m = load_model_config(fixture(c.file));
        EXPECT_EQ(m.sliding_window, c.window) << c.file;
        EXPECT_EQ(m.sliding_window_layers, c.layers) << c.file;
    }
}

TEST(ModelConfig, GptStyleConfigsNameTheirMlpAndKvHeadsTheirWay) {
    // GPT-J: n_inner null is 4 * n_embd.
    const ModelConfig gptj = load_model_config(fixture("gptj_config.json"));
    EXPECT_EQ(gptj.intermediate_size, 4 * 4096);
    EXPECT_EQ(gptj.num_key_value_heads, 16);
    EXPECT_FALSE(gptj.gated_mlp);
    // StarCoder: an explicit n_inner, and multi_query: one KV head for all 48.
    const ModelConfig starcoder = load_model_config(fixture("starcoder_config.json"));
    EXPECT_EQ(starcoder.intermediate_size, 24576);
    EXPECT_EQ(starcoder.num_key_value_heads, 1);
    EXPECT_EQ(starcoder.head_dim, 128);
    // Of these only GPT-2 keeps its layers in transformers' Conv1D (in x out); GPT-J and
    // StarCoder (gpt_bigcode) use nn.Linear, out x in.
    EXPECT_TRUE(load_model_config(fixture("gpt2_config.json")).conv1d_layers);
    EXPECT_FALSE(gptj.conv1d_layers);
    EXPECT_FALSE(starcoder.conv1d_layers);
}

TEST(ModelConfig, CheckRejectsNonPositiveSizes) {
    ModelConfig m = find_builtin_model("gpt2");
    m.num_hidden_layers = 0;
    EXPECT_THROW(check_model_config(m), Error);
}
