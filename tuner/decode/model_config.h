// A transformer decoder described by the sizes that decide its GEMMs, as a Hugging Face
// config.json names them. Built-ins cover the models the tuner is usually pointed at.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace sgemm {

struct ModelConfig {
    std::string name;  // as the config gives it, control characters too: printers escape them
    long hidden_size = 0;
    long intermediate_size = 0;
    long vocab_size = 0;
    long num_attention_heads = 0;
    long num_key_value_heads = 0;  // fewer than the attention heads under grouped-query attention
    long head_dim = 0;
    long num_hidden_layers = 0;
    // SwiGLU MLPs (Llama, Mistral) have a gate and an up projection; GPT-2-style MLPs only up.
    bool gated_mlp = true;
    // Sliding-window attention: sliding_window_layers of the layers attend to at most
    // sliding_window past tokens, the others to all of them (Mistral-7B-v0.1: all 32 layers
    // to 4096; Gemma-2: every other layer). 0 and 0 without it.
    long sliding_window = 0;
    long sliding_window_layers = 0;
    // The longest context the model was made for (max_position_embeddings, n_positions in
    // GPT-2 configs); 0 where the config does not say.
    long max_positions = 0;
    // Hugging Face's GPT-2 keeps its layers' weights in x out (transformers' Conv1D, not
    // nn.Linear), so they read as NN in that layout too; its LM head, the token embedding,
    // is out x in like every other model's.
    bool conv1d_layers = false;
    std::string source;  // where the numbers come from
};

// Built-ins, each with its numbers' source; names are matched ignoring case.
const std::vector<ModelConfig>& builtin_models();
ModelConfig find_builtin_model(const std::string& name);  // unknown: an Error listing the names

// A Hugging Face style config.json. Errors name the file and the missing or inconsistent field;
// without a head_dim field the attention heads must divide hidden_size. Architectures whose
// GEMMs these sizes do not describe (mixtures of experts, compressed latent attention) are
// refused by the field that marks them. Whether the MLP has a gate comes from model_type (a
// type the loader does not know is refused) unless `gated_mlp` says.
ModelConfig load_model_config(const std::string& path, std::optional<bool> gated_mlp = std::nullopt);

// Every size positive, every GEMM dimension it makes within 32 bits, and the KV heads dividing
// the attention heads; else an Error naming the field.
void check_model_config(const ModelConfig& model);

}  // namespace sgemm
