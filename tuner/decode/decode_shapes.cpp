#include "tuner/decode/decode_shapes.h"

#include "src/util/error.h"
#include "src/util/text.h"

namespace sgemm {

namespace {

// Adds a GEMM, or folds it into the row that already has its shape and storage.
void add(std::vector<DecodeGemm>& rows, DecodeGemm gemm) {
    for (DecodeGemm& row : rows)
        if (row.m == gemm.m && row.n == gemm.n && row.k == gemm.k && row.stored_in_out == gemm.stored_in_out) {
            row.name += "/" + gemm.name;
            row.weight += gemm.weight;
            return;
        }
    rows.push_back(std::move(gemm));
}

}  // namespace

std::vector<DecodeGemm> decode_gemms(const ModelConfig& model, long batch, bool fuse) {
    check_model_config(model);
    if (batch < 1) throw Error("batch must be at least 1, got " + std::to_string(batch));
    const long layers = model.num_hidden_layers;
    const long hidden = model.hidden_size;
    const long q_width = model.num_attention_heads * model.head_dim;
    const long kv_width = model.num_key_value_heads * model.head_dim;
    const long ffn = model.intermediate_size;
    const bool conv1d = model.conv1d_layers;  // the layers', not the LM head's

    std::vector<DecodeGemm> rows;
    if (fuse) {
        add(rows, {"qkv", batch, q_width + 2 * kv_width, hidden, layers, conv1d});
    } else {
        add(rows, {"q", batch, q_width, hidden, layers, conv1d});
        add(rows, {"k", batch, kv_width, hidden, layers, conv1d});
        add(rows, {"v", batch, kv_width, hidden, layers, conv1d});
    }
    add(rows, {"o", batch, hidden, q_width, layers, conv1d});
    if (!model.gated_mlp) {
        add(rows, {"up", batch, ffn, hidden, layers, conv1d});
    } else if (fuse) {
        add(rows, {"gate_up", batch, 2 * ffn, hidden, layers, conv1d});
    } else {
        add(rows, {"gate", batch, ffn, hidden, layers, conv1d});
        add(rows, {"up", batch, ffn, hidden, layers, conv1d});
    }
    add(rows, {"down", batch, hidden, ffn, layers, conv1d});
    add(rows, {"lm_head", batch, model.vocab_size, hidden, 1});
    return rows;
}

void write_shapes_csv(std::ostream& out, const std::vector<DecodeGemm>& gemms, WeightLayout layout,
                      const std::vector<std::string>& comments) {
    // A comment stays one line whatever a name or path holds (a newline is written \x0a).
    for (const std::string& line : comments) out << "# " << printable(line) << "\n";
    out << "M,N,K,transA,transB,precision,weight,name\n";
    // In x out, every weight is read NN, however its checkpoint stores it: a Conv1D layer and
    // the LM head of one shape (GPT-2's with a vocabulary of 3 x hidden, say) are one row
    // there, where they were two that the tuner merged with a warning.
    std::vector<DecodeGemm> rows;
    for (DecodeGemm g : gemms) {
        if (layout == WeightLayout::in_out) g.stored_in_out = true;
        add(rows, std::move(g));
    }
    for (const DecodeGemm& g : rows) {
        const bool nt = layout == WeightLayout::out_in && !g.stored_in_out;
        out << g.m << "," << g.n << "," << g.k << (nt ? ",N,T," : ",N,N,") << "fp32," << g.weight << "," << g.name << "\n";
    }
}

}  // namespace sgemm
