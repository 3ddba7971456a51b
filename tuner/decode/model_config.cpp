#include "tuner/decode/model_config.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "src/util/error.h"
#include "tuner/decode/json_fields.h"
#include "src/util/text.h"

namespace sgemm {

const std::vector<ModelConfig>& builtin_models() {
    static const std::vector<ModelConfig> models = [] {
        std::vector<ModelConfig> m(3);
        // meta-llama/Meta-Llama-3-8B, config.json: hidden_size 4096, intermediate_size 14336,
        // vocab_size 128256, num_attention_heads 32, num_key_value_heads 8, num_hidden_layers 32
        // (head_dim 4096 / 32 = 128), max_position_embeddings 8192, SwiGLU MLP.
        m[0].name = "llama-3-8b";
        m[0].hidden_size = 4096, m[0].intermediate_size = 14336, m[0].vocab_size = 128256;
        m[0].num_attention_heads = 32, m[0].num_key_value_heads = 8, m[0].head_dim = 128;
        m[0].num_hidden_layers = 32, m[0].max_positions = 8192;
        m[0].source = "meta-llama/Meta-Llama-3-8B config.json";
        // mistralai/Mistral-7B-v0.1, config.json: as Llama-3-8B but vocab_size 32000,
        // sliding_window 4096 and max_position_embeddings 32768.
        m[1].name = "mistral-7b";
        m[1].hidden_size = 4096, m[1].intermediate_size = 14336, m[1].vocab_size = 32000;
        m[1].num_attention_heads = 32, m[1].num_key_value_heads = 8, m[1].head_dim = 128;
        m[1].num_hidden_layers = 32, m[1].sliding_window = 4096, m[1].sliding_window_layers = 32;
        m[1].max_positions = 32768;
        m[1].source = "mistralai/Mistral-7B-v0.1 config.json";
        // openai-community/gpt2 (124M), config.json: n_embd 768, n_head 12, n_layer 12,
        // n_inner null (= 4 * 768 = 3072), vocab_size 50257, n_positions 1024; multi-head attention (12 KV heads,
        // head_dim 64), GELU MLP without a gate.
        m[2].name = "gpt2";
        m[2].hidden_size = 768, m[2].intermediate_size = 3072, m[2].vocab_size = 50257;
        m[2].num_attention_heads = 12, m[2].num_key_value_heads = 12, m[2].head_dim = 64;
        m[2].num_hidden_layers = 12, m[2].gated_mlp = false, m[2].max_positions = 1024;
        m[2].conv1d_layers = true;
        m[2].source = "openai-community/gpt2 config.json";
        return m;
    }();
    return models;
}

namespace {

// GPT-2 configs name the sizes differently; Hugging Face maps them with the same aliases.
long size_field(const JsonFields& json, const std::string& key, const char* gpt2_alias) {
    if (!json.has(key) && json.has(gpt2_alias)) return json.positive_integer(gpt2_alias);
    return json.positive_integer(key);
}

// The hidden size, which GPT-2's configs name n_embd, and BLOOM's and Falcon's n_embed (their
// Hugging Face configs take it under that name).
bool has_hidden_size(const JsonFields& json) { return json.has("hidden_size") || json.has("n_embd") || json.has("n_embed"); }

long hidden_size_field(const JsonFields& json) {
    if (!json.has("hidden_size") && !json.has("n_embd") && json.has("n_embed")) return json.positive_integer("n_embed");
    return size_field(json, "hidden_size", "n_embd");
}

// Whether the MLP has a gate projection beside the up projection (SwiGLU and GeGLU MLPs, as
// Llama's) or only an up projection (up -> activation -> down, as GPT-2's) decides the width
// of the MLP's first GEMM, and no config field says which: the model type does. A type in
// neither list is refused rather than guessed (a guess doubled StarCoder2's up projection);
// load_model_config's caller can say which with its `gated_mlp` argument.
const char* const kGatedMlpTypes[] = {"llama",   "mistral", "mistral3", "qwen",     "qwen2",     "qwen3",
                                      "gemma",   "gemma2",  "gemma3",   "gemma3_text", "phi3",   "cohere",
                                      "cohere2", "olmo",    "olmo2",    "granite",  "stablelm", "internlm2",
                                      "hunyuan", "minicpm", "baichuan"};
const char* const kUngatedMlpTypes[] = {"gpt2",   "gpt_neox", "gpt_bigcode", "gptj",      "falcon", "phi",
                                        "starcoder2", "nemotron", "persimmon", "bloom", "codegen"};

// Types whose configs name their sizes, or shape their layers, in ways this tool does not
// read: read with the fields above, their GEMMs would come out wrong or be refused for a
// field that is there under another name.
struct TypeNamedOtherwise {
    const char* type;
    const char* how;
};
const TypeNamedOtherwise kTypesNamedOtherwise[] = {
    {"opt", "names its MLP width ffn_dim and may project its embeddings to another width (word_embed_proj_dim)"},
    {"mpt", "names its sizes d_model, n_heads, n_layers and expansion_ratio, and its KV heads in attn_config"},
    {"gpt_neo", "names its sizes num_heads and num_layers, and alternates local-attention layers (attention_types)"},
    {"exaone", "names its layer count num_layers"},
};

void refuse_types_named_otherwise(const JsonFields& typed, const std::string& model_type) {
    for (const TypeNamedOtherwise& t : kTypesNamedOtherwise)
        if (model_type == t.type)
            typed.fail("model_type", single_quoted(model_type) + " is not read by this tool: its config " + t.how +
                                         ", fields it does not read");
}

// The types whose Hugging Face configuration gives the KV heads, or the head_dim, a default
// of its own (Mistral's 8 KV heads, Gemma's head_dim of 256), not the rule for a whole
// config.json (as many KV heads as heads; hidden_size / heads): a config of these types
// without the field was written by hand, and the field is asked for.
const char* const kTypesWithTheirOwnKvHeads[] = {"mistral", "qwen2", "qwen3",    "gemma",     "gemma2",
                                                 "gemma3",  "gemma3_text", "stablelm", "starcoder2"};
const char* const kTypesWithTheirOwnHeadDim[] = {"gemma", "gemma2", "gemma3", "gemma3_text", "qwen3"};

// The types whose configuration in Hugging Face has a sliding window by default; with them
// gemma3 and mistral3, whose text_config without a model_type of its own is gemma3_text's
// or mistral's.
const char* const kTypesWithADefaultWindow[] = {"mistral", "gemma2", "gemma3_text", "cohere2", "gemma3", "mistral3"};

template <std::size_t N>
bool listed(const char* const (&types)[N], const std::string& model_type) {
    return std::find(std::begin(types), std::end(types), model_type) != std::end(types);
}

std::string joined(const char* const* first, const char* const* last) {
    std::string text;
    for (; first != last; ++first) text += (text.empty() ? "" : ", ") + std::string(*first);
    return text;
}

bool mlp_is_gated(const JsonFields& json, const std::string& model_type, std::optional<bool> gated_mlp) {
    const bool known_gated = listed(kGatedMlpTypes, model_type), known_ungated = listed(kUngatedMlpTypes, model_type);
    // An answer against the known type would give another model's GEMMs, with no sign of it.
    if (gated_mlp && (known_gated || known_ungated) && *gated_mlp != known_gated)
        json.fail("model_type", "'" + printable(model_type) + "' has " +
                                    (known_gated ? "a gated MLP, so --gated-mlp no" : "an MLP without a gate, so --gated-mlp yes") +
                                    " contradicts it: leave --gated-mlp out for a model_type this tool knows");
    if (gated_mlp) return *gated_mlp;
    if (known_gated) return true;
    if (known_ungated) return false;
    const std::string known = "gated (a gate and an up projection) for " +
                              joined(std::begin(kGatedMlpTypes), std::end(kGatedMlpTypes)) + "; up only for " +
                              joined(std::begin(kUngatedMlpTypes), std::end(kUngatedMlpTypes)) +
                              ". Say which with --gated-mlp yes or no";
    if (model_type.empty()) json.fail("model_type", "is missing, and it says whether the MLP has a gate: " + known);
    json.fail("model_type", "'" + printable(model_type) + "' is not a type whose MLP this tool knows: " + known);
}

// The longest context, only for a note: a value that is not a positive integer is ignored
// rather than refusing a config whose GEMMs it does not touch.
long max_positions(const JsonFields& json) {
    const JsonValue* v = json.find("max_position_embeddings");
    if (!v) v = json.find("n_positions");
    if (!v || v->kind != JsonValue::Kind::Number) return 0;
    const double value = std::strtod(v->text.c_str(), nullptr);
    return value >= 1 && value <= 1e15 && value == static_cast<double>(static_cast<long>(value)) ? static_cast<long>(value)
                                                                                                 : 0;
}

// Configs whose MLP width may be absent or null, meaning 4 * hidden as Hugging Face reads them:
// GPT-2, GPT-J, StarCoder and CodeGen name it n_inner, Falcon ffn_hidden_size; BLOOM's is
// always 4 * hidden (its configs have no n_inner).
const char* four_times_hidden_field(const std::string& model_type) {
    if (model_type == "gpt2" || model_type == "gptj" || model_type == "gpt_bigcode" || model_type == "codegen" ||
        model_type == "bloom")
        return "n_inner";
    if (model_type == "falcon") return "ffn_hidden_size";
    return nullptr;
}

// Fields that mark an architecture whose GEMMs are not the dense decoder's: a mixture of
// experts has a router and many expert MLPs, latent attention low-rank projections. Its
// shapes would come out as a dense model's, silently wrong, so it is refused. An expert count
// of 1 (some dense configs write one) and a rank of null or 0 mark nothing; other MoE fields
// (moe_intermediate_size, num_experts_per_tok) come with a count and are not consulted.
void refuse_unmodelled_architectures(const JsonFields& json) {
    struct Marker {
        const char* key;
        double above;  // a number above this marks the architecture
        const char* what;
    };
    static const Marker markers[] = {
        {"num_local_experts", 1, "a mixture of experts (Mixtral style)"},
        {"num_experts", 1, "a mixture of experts"},
        {"n_routed_experts", 1, "a mixture of experts (DeepSeek style)"},
        {"moe_num_experts", 1, "a mixture of experts (ERNIE style)"},
        {"kv_lora_rank", 0, "multi-head latent attention (DeepSeek style)"},
        {"q_lora_rank", 0, "multi-head latent attention (DeepSeek style)"},
    };
    for (const Marker& m : markers) {
        const JsonValue* v = json.find(m.key);
        if (!v || v->kind == JsonValue::Kind::Null) continue;
        // Not a number ("8"): it cannot be judged, and passed over it let a mixture of experts
        // through as a dense model.
        if (v->kind != JsonValue::Kind::Number)
            json.fail(m.key, "must be a number or null: it says whether this is " + std::string(m.what));
        if (std::strtod(v->text.c_str(), nullptr) <= m.above) continue;
        json.fail(m.key, "(" + v->text + ") says this is " + m.what +
                             ", whose GEMMs sgemm-shapes and sgemm-roofline do not model; only dense decoders are");
    }
}

// layer_types, when given: one kind per layer, each sliding_attention or full_attention (a
// hybrid with convolution or state-space layers has fewer attention layers than the config's
// count, and is refused). Returns how many slide.
std::optional<long> sliding_layers_listed(const JsonFields& json, long layers) {
    const auto types = json.string_list("layer_types");
    if (!types) return std::nullopt;
    if (static_cast<long>(types->size()) != layers)
        json.fail("layer_types", "has " + std::to_string(types->size()) + " entries for " + std::to_string(layers) +
                                     " layers");
    long sliding = 0;
    for (const std::string& type : *types) {
        if (type == "sliding_attention")
            ++sliding;
        else if (type != "full_attention")
            json.fail("layer_types", "holds '" + printable(type) +
                                         "': only sliding_attention and full_attention layers are modelled");
    }
    return sliding;
}

// How many layers attend through the sliding window, by the config's rule for it as Hugging
// Face transformers reads it, defaults included.
long sliding_window_layers(const JsonFields& json, const std::string& model_type, long layers) {
    if (const auto listed = sliding_layers_listed(json, layers)) return *listed;
    // Llama's attention has no window of its own in Hugging Face (nor in vLLM, which takes
    // one only from layer_types): a sliding_window beside it, as some fine-tunes write, is not
    // used.
    if (model_type == "llama") return 0;
    // Qwen2 and Qwen3 write a window that is off unless use_sliding_window is true (their
    // default is false), and then only for layers from max_window_layers on (default 28).
    const bool qwen = model_type.rfind("qwen", 0) == 0;
    if (json.has("use_sliding_window") || qwen) {
        if (!json.optional_bool("use_sliding_window").value_or(false)) return 0;
        const long first = json.has("max_window_layers") ? json.non_negative_integer("max_window_layers") : 28;
        return std::max(0L, layers - first);
    }
    // Gemma-3 and Cohere2: every pattern-th layer sees the whole context, the others the
    // window (defaults 6 and 4).
    long pattern = json.optional_positive_integer("sliding_window_pattern").value_or(0);
    if (pattern == 0 && model_type.rfind("gemma3", 0) == 0) pattern = 6;
    if (pattern == 0 && model_type == "cohere2") pattern = 4;
    if (pattern > 0) return layers - layers / pattern;
    // Gemma-2: layers 0, 2, 4, ... slide, the odd ones see everything.
    if (model_type == "gemma2") return (layers + 1) / 2;
    return layers;  // Mistral-7B-v0.1: every layer
}

}  // namespace

ModelConfig find_builtin_model(const std::string& name) {
    const std::string wanted = chosen_word(name);
    std::string names;
    for (const ModelConfig& m : builtin_models()) {
        if (m.name == wanted) return m;
        names += (names.empty() ? "" : ", ") + m.name;
    }
    throw Error("unknown model " + single_quoted(name) + ": built-in models are " + names + " (or give --config FILE)");
}

ModelConfig load_model_config(const std::string& path, std::optional<bool> gated_mlp) {
    const JsonFields file = JsonFields::load(path);
    // A model that also sees images (Gemma-3, Mistral-3, LLaVA) keeps its language model's
    // sizes in text_config; the text_config's own model_type, where it has one, names that
    // model. Its fields are read from there alone: those it leaves to Hugging Face's defaults
    // are reported missing, not guessed.
    const JsonValue* text_config = file.find("text_config");
    const bool nested = !has_hidden_size(file) && text_config &&
                        text_config->kind == JsonValue::Kind::Object;
    const auto not_guessed = [](const char* where) {
        return std::string("Hugging Face fills it from the model type's defaults, which this tool does not guess; "
                           "add it to the ") + where;
    };
    const JsonFields json =
        nested ? JsonFields(*text_config, file.source() + ", text_config", not_guessed("text_config")) : file;
    ModelConfig m;
    // As given, control characters too: JSON keeps them, tables and CSV comments escape them.
    m.name = file.text("_name_or_path").value_or("");
    if (m.name.empty()) m.name = file.source();  // "standard input" for "-"
    m.source = file.source();
    // The text model's own type where its text_config names one, else the file's; a refusal
    // of the type names the object that holds it.
    const JsonFields& typed = json.has("model_type") ? json : file;
    const std::string model_type = typed.text("model_type").value_or("");
    refuse_types_named_otherwise(typed, model_type);
    m.hidden_size = hidden_size_field(json);
    m.num_attention_heads = size_field(json, "num_attention_heads", "n_head");
    m.num_hidden_layers = size_field(json, "num_hidden_layers", "n_layer");
    m.vocab_size = json.positive_integer("vocab_size");
    refuse_unmodelled_architectures(json);
    const char* const width_alias = four_times_hidden_field(model_type);
    if (json.has("intermediate_size") || !width_alias)
        m.intermediate_size = size_field(json, "intermediate_size", "n_inner");
    else if (const auto width = json.optional_positive_integer(width_alias))
        m.intermediate_size = *width;
    else  // capped so as not to overflow: a hidden size past 32 bits is refused by check_model_config
        m.intermediate_size = 4 * std::min<long>(m.hidden_size, std::numeric_limits<int>::max());
    // Qwen (the first; model_type qwen) writes the gate's and the up projection's widths added
    // together: each is half (read as one, its MLP came out twice its size).
    if (model_type == "qwen") {
        if (m.intermediate_size % 2 != 0)
            json.fail("intermediate_size", "(" + std::to_string(m.intermediate_size) +
                                               ") is odd, where a qwen model's is its gate's and up projection's "
                                               "widths added together");
        m.intermediate_size /= 2;
    }
    // As in Hugging Face: no num_key_value_heads means multi-head attention, and multi_query
    // one KV head for all (StarCoder's gpt_bigcode and Falcon default to it). Falcon names its
    // KV heads num_kv_heads, used with new_decoder_architecture (Falcon-40B) or without
    // multi_query.
    // A text_config holds only what differs from its type's defaults, and those are the type's
    // own, not the rules below for a whole config.json, which Hugging Face writes in full:
    // Gemma-3's text model has 4 KV heads and a head_dim of 256, whatever its heads and size.
    // So there the KV heads and head_dim must be given.
    for (const auto& [field, types_with_their_own] :
         {std::pair<const char*, bool>{"num_key_value_heads", listed(kTypesWithTheirOwnKvHeads, model_type)},
          {"head_dim", listed(kTypesWithTheirOwnHeadDim, model_type)}})
        if (!nested && types_with_their_own && !json.find(field))
            json.fail(field, "is missing, and a " + model_type + " model's default is its type's own: " +
                                 not_guessed("config"));
    const bool falcon = model_type == "falcon";
    const bool multi_query = json.optional_bool("multi_query").value_or(model_type == "gpt_bigcode" || falcon);
    if (nested || listed(kTypesWithTheirOwnKvHeads, model_type))
        m.num_key_value_heads = json.positive_integer("num_key_value_heads");
    else if (falcon && (json.optional_bool("new_decoder_architecture").value_or(false) || !multi_query))
        m.num_key_value_heads = json.optional_positive_integer("num_kv_heads").value_or(m.num_attention_heads);
    else
        m.num_key_value_heads =
            json.optional_positive_integer("num_key_value_heads").value_or(multi_query ? 1 : m.num_attention_heads);
    const std::optional<long> head_dim = nested || listed(kTypesWithTheirOwnHeadDim, model_type)
                                             ? json.positive_integer("head_dim")
                                             : json.optional_positive_integer("head_dim");
    if (head_dim) {
        m.head_dim = *head_dim;
    } else {
        if (m.hidden_size % m.num_attention_heads != 0)
            json.fail("num_attention_heads", "(" + std::to_string(m.num_attention_heads) +
                                                 ") does not divide hidden_size (" + std::to_string(m.hidden_size) +
                                                 ") and there is no head_dim");
        m.head_dim = m.hidden_size / m.num_attention_heads;
    }
    // Likewise a window: these types' defaults have one (4096 tokens), so a config that has
    // no sliding_window field has that window, and null says there is none. Hugging Face
    // writes the field into every config.json of these types, so one without it was written
    // by hand: it is asked for there too, not taken for no window.
    if (!json.find("sliding_window") && listed(kTypesWithADefaultWindow, model_type))
        json.fail("sliding_window", "is missing, and a " + model_type + " model has a window unless it says null: " +
                                        not_guessed(nested ? "text_config" : "config"));
    m.sliding_window = json.optional_positive_integer("sliding_window").value_or(0);
    if (m.sliding_window > 0)
        m.sliding_window_layers = sliding_window_layers(json, model_type, m.num_hidden_layers);
    else if (sliding_layers_listed(json, m.num_hidden_layers).value_or(0) > 0)
        json.fail("layer_types", "lists sliding_attention layers, but there is no sliding_window");
    if (m.sliding_window_layers == 0) m.sliding_window = 0;
    m.max_positions = max_positions(json);
    // Last: a config that is wrong in its fields says so before an unknown type is asked about.
    m.gated_mlp = mlp_is_gated(typed, model_type, gated_mlp);
    m.conv1d_layers = model_type == "gpt2";
    try {
        check_model_config(m);
    } catch (const Error& e) {
        throw Error(printable(path) + ": " + e.what());
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
    if (m.sliding_window_layers < 0 || m.sliding_window_layers > m.num_hidden_layers ||
        (m.sliding_window_layers > 0) != (m.sliding_window > 0))
        throw Error("a sliding window of " + std::to_string(m.sliding_window) + " tokens on " +
                    std::to_string(m.sliding_window_layers) + " of " + std::to_string(m.num_hidden_layers) +
                    " layers does not fit the model");
    // The GEMMs' dimensions (the tuner's and cuBLAS's are 32-bit), computed without overflow:
    // each factor is checked first.
    const long max_dimension = std::numeric_limits<int>::max();
    const auto fits = [&](double value, const std::string& what) {
        if (value <= max_dimension) return;
        // Printed from the double: a product past 2^64 has no unsigned long long to cast to.
        char text[64];
        std::snprintf(text, sizeof text, "%.0f", value);
        throw Error(what + " is " + text +
                    ", past the 32-bit GEMM dimensions (at most " + std::to_string(max_dimension) + ")");
    };
    fits(m.hidden_size, "hidden_size");
    fits(m.vocab_size, "vocab_size");
    fits(m.num_hidden_layers, "num_hidden_layers");
    fits(m.sliding_window, "sliding_window");
    fits((m.gated_mlp ? 2.0 : 1.0) * m.intermediate_size, m.gated_mlp ? "gate_up's width (2 x intermediate_size)"
                                                                      : "intermediate_size");
    fits((static_cast<double>(m.num_attention_heads) + 2.0 * m.num_key_value_heads) * m.head_dim,
         "qkv's width ((num_attention_heads + 2 x num_key_value_heads) x head_dim)");
    if (m.num_attention_heads % m.num_key_value_heads != 0)
        throw Error("field 'num_key_value_heads' (" + std::to_string(m.num_key_value_heads) +
                    ") does not divide num_attention_heads (" + std::to_string(m.num_attention_heads) + ")");
}

}  // namespace sgemm
