// The number formats a decode step can run in, and what each costs in bytes. Weights set the
// GEMMs' format; activations and the KV cache follow the 16-bit or 32-bit world they live in.
#pragma once
#include <string>

namespace sgemm {

enum class Precision { fp32, fp16, bf16, int8 };

// "fp32", "fp16", "bf16" or "int8"; anything else is an Error that lists the choices.
Precision parse_precision(const std::string& text);
std::string to_string(Precision precision);

double bytes_per_element(Precision precision);

// The format of activations and the KV cache when the weights are in `weights`: fp32 stays
// fp32, 16-bit stays 16-bit, and int8 weights run with fp16 activations (W8A8 GEMMs quantise
// their input on the fly; everything stored between kernels stays fp16).
Precision activation_precision(Precision weights);

}  // namespace sgemm
