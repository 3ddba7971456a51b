#include "tuner/decode/model_config.h"

#include <algorithm>
#include <cctype>

#include "src/util/error.h"
#include "tuner/decode/json_fields.h"

namespace sgemm {

const std::vector<ModelConfig>& builtin_models() {
    static const std::vector<ModelConfig> models = [] {
        std::vector<ModelConfig> m(3);
        // meta-llama/Meta-Llama-3-8B, config.json: hidden_size 4096, intermediate_size 14336,
        // vocab_size 128256, num_attention_heads 32, num_key_value_heads 8, num_hidden_layers 32
        // (head_dim 4096 / 32 = 128), SwiGLU MLP.
        m[0].name = "llama-3-8b";
        m[0].hidden_size = 4096, m[0].intermediate_size = 14336, m[0].vocab_size = 128256;
        m[0].num_attention_heads = 32, m[0].num_key_value_heads = 8, m[0].head_dim = 128;
        m[0].num_hidden_layers = 32;
        m[0].source = "meta-llama/Meta-Llama-3-8B config.json";
        // mistralai/Mistral-7B-v0.1, config.json: as Llama-3-8B but vocab_size 32000 and
        // sliding_window 4096.
        m[1].name = "mistral-7b";
        m[1].hidden_size = 4096, m[1].intermediate_size = 14336, m[1].vocab_size = 32000;
        m[1].num_attention_heads = 32, m[1].num_key_value_heads = 8, m[1].head_dim = 128;
        m[1].num_hidden_layers = 32, m[1].sliding_window = 4096;
        m[1].source = "mistralai/Mistral-7B-v0.1 config.json";
        // openai-community/gpt2 (124M), config.json: n_embd 768, n_head 12, n_layer 12,
        // n_inner null (= 4 * 768 = 3072), vocab_size 50257; multi-head attention (12 KV heads,
        // head_dim 64), GELU MLP without a gate.
        m[2].name = "gpt2";
        m[2].hidden_size = 768, m[2].intermediate_size = 3072, m[2].vocab_size = 50257;
        m[2].num_attention_heads = 12, m[2].num_key_value_heads = 12, m[2].head_dim = 64;
        m[2].num_hidden_layers = 12, m[2].gated_mlp = false;
        m[2].source = "openai-community/gpt2 config.json";
        return m;
    }();
    return models;
}

namespace {

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

// GPT-2 configs name the sizes differently; Hugging Face maps them with the same aliases.
long size_field(const JsonFields& json, const std::string& key, const char* gpt2_alias) {
    if (!json.has(key) && json.has(gpt2_alias)) return json.positive_integer(gpt2_alias);
    return json.positive_integer(key);
}

// Model families whose MLP is up -> activation -> down, with no gate projection.
bool has_ungated_mlp(const std::string& model_type) {
    static const char* const ungated[] = {"gpt2", "gpt_neox", "gpt_bigcode", "gptj", "opt", "falcon", "phi"};
    return std::find(std::begin(ungated), std::end(ungated), model_type) != std::end(ungated);
}

}  // namespace

ModelConfig find_builtin_model(const std::string& name) {
    std::string names;
    for (const ModelConfig& m : builtin_models()) {
        if (m.name == lower(name)) return m;
        names += (names.empty() ? "" : ", ") + m.name;
    }
    throw Error("unknown model '" + name + "': built-in models are " + names + " (or give --config FILE)");
}

ModelConfig load_model_config(const std::string& path) {
    const JsonFields json = JsonFields::load(path);
    ModelConfig m;
    m.name = json.text("_name_or_path").value_or(path);
    m.source = path;
    m.hidden_size = size_field(json, "hidden_size", "n_embd");
    m.num_attention_heads = size_field(json, "num_attention_heads", "n_head");
    m.num_hidden_layers = size_field(json, "num_hidden_layers", "n_layer");
    m.vocab_size = json.positive_integer("vocab_size");
    const std::string model_type = json.text("model_type").value_or("");
    m.gated_mlp = !has_ungated_mlp(model_type);
    // GPT-2 writes n_inner: null for its default MLP width of 4 * n_embd.
    if (!json.has("intermediate_size") && model_type == "gpt2")
        m.intermediate_size = json.optional_positive_integer("n_inner").value_or(4 * m.hidden_size);
    else
        m.intermediate_size = json.positive_integer("intermediate_size");
    // As in Hugging Face: no num_key_value_heads means multi-head attention.
    m.num_key_value_heads = json.optional_positive_integer("num_key_value_heads").value_or(m.num_attention_heads);
    if (const auto head_dim = json.optional_positive_integer("head_dim")) {
        m.head_dim = *head_dim;
    } else {
        if (m.hidden_size % m.num_attention_heads != 0)
            json.fail("num_attention_heads", "(" + std::to_string(m.num_attention_heads) +
                                                 ") does not divide hidden_size (" + std::to_string(m.hidden_size) +
                                                 ") and there is no head_dim");
        m.head_dim = m.hidden_size / m.num_attention_heads;
    }
    m.sliding_window = json.optional_positive_integer("sliding_window").value_or(0);
    try {
        check_model_config(m);
    } catch (const Error& e) {
        throw Error(path + ": " + e.what());
    }
    return m;
}

void check_model_config(const ModelConfig& m) {
    const auto positive = [](long v, const char* field) {
        if (v < 1) throw Error(std::string("field '") + field + "' must be positive, got " + std::to_string(v));
    };
    positive(m.hidden_size, "hidden_size");
    positive(m.intermediate_size, "intermediate_size");
    positive(m.vocab_size, "vocab_size");
    positive(m.num_attention_heads, "num_attention_heads");
    positive(m.num_key_value_heads, "num_key_value_heads");
    positive(m.head_dim, "head_dim");
    positive(m.num_hidden_layers, "num_hidden_layers");
    if (m.sliding_window < 0) throw Error("field 'sliding_window' must not be negative");
    if (m.num_attention_heads % m.num_key_value_heads != 0)
        throw Error("field 'num_key_value_heads' (" + std::to_string(m.num_key_value_heads) +
                    ") does not divide num_attention_heads (" + std::to_string(m.num_attention_heads) + ")");
}

}  // namespace sgemm
