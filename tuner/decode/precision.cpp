#include "tuner/decode/precision.h"

#include "src/util/error.h"
#include "src/util/text.h"

namespace sgemm {

Precision parse_precision(const std::string& text) {
    const std::string name = chosen_word(text);  // in any case: FP16 is fp16
    if (name == "fp32") return Precision::fp32;
    if (name == "fp16") return Precision::fp16;
    if (name == "bf16") return Precision::bf16;
    if (name == "int8") return Precision::int8;
    throw Error("unknown dtype " + single_quoted(text) + ": expected fp32, fp16, bf16 or int8");
}

std::string to_string(Precision precision) {
    switch (precision) {
        case Precision::fp32: return "fp32";
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        case Precision::int8: return "int8";
    }
    return "?";
}

double bytes_per_element(Precision precision) {
    switch (precision) {
        case Precision::fp32: return 4;
        case Precision::fp16:
        case Precision::bf16: return 2;
        case Precision::int8: return 1;
    }
    return 4;
}

Precision activation_precision(Precision weights) {
    return weights == Precision::int8 ? Precision::fp16 : weights;
}

}  // namespace sgemm
