// The GEMMs of one decode step: every sequence in the batch brings one new token, so each
// projection is a GEMM with M = batch rows. Row-major C[M x N] = A[M x K] * B[K x N], with the
// weight matrix as B (K = input features, N = output features).
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "tuner/decode/model_config.h"

namespace sgemm {

struct DecodeGemm {
    std::string name;  // the projection(s); "q/o" when two projections share one shape
    long m = 0, n = 0, k = 0;
    long weight = 0;   // calls per token step: a per-layer projection runs once per layer
    // The checkpoint keeps this weight in x out whatever layout is asked for (GPT-2's Conv1D
    // layers, ModelConfig::conv1d_layers): an NN row in Hugging Face's layout too.
    bool stored_in_out = false;
};

// In the order a layer runs them, the LM head last. With `fuse`, Q, K and V are one GEMM and
// so are gate and up, as inference engines run them; without, each projection is its own,
// and projections of the same shape (K and V, gate and up, ...) share one row whose weight
// counts them all, so a tuner sees each shape once.
std::vector<DecodeGemm> decode_gemms(const ModelConfig& model, long batch, bool fuse);

// How an engine stores a weight: in x out (K x N, B as the GEMM reads it: NN rows) or out x
// in (N x K, as Hugging Face and most checkpoints keep a linear layer: NT rows, transB = T).
enum class WeightLayout { in_out, out_in };

// The tuner's shapes CSV: `comments` as '#' lines, the header
// M,N,K,transA,transB,precision,weight,name, then one row per GEMM (fp32; transB as `layout`
// says, but N for a weight stored_in_out; A never transposed).
void write_shapes_csv(std::ostream& out, const std::vector<DecodeGemm>& gemms, WeightLayout layout,
                      const std::vector<std::string>& comments);

}  // namespace sgemm
