#include "db/shape_key.h"

#include <cctype>

#include "src/util/error.h"
#include "src/util/text.h"

namespace sgemm {

GemmPrecision parse_gemm_precision(const std::string& text) {
    const std::string name = chosen_word(text);  // FP32 and " fp32" as well, as --dtype takes FP16
    if (name == "fp32") return GemmPrecision::fp32;
    if (name == "tf32") return GemmPrecision::tf32;
    throw Error("unknown precision " + single_quoted(text) + " (expected fp32 or tf32)");
}

std::string to_string(GemmPrecision precision) { return precision == GemmPrecision::tf32 ? "tf32" : "fp32"; }

std::string ShapeKey::transposes() const { return std::string(trans_a ? "T" : "N") + (trans_b ? "T" : "N"); }

std::string ShapeKey::to_string() const {
    return "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) + " " + transposes() +
           " " + sgemm::to_string(precision) + " align" + std::to_string(alignment);
}

void parse_transposes(const std::string& given, ShapeKey& key) {
    const std::string text = trim(given);  // " NT": the white space around a word is no part of it
    const auto is = [](char c, char want) { return std::toupper(static_cast<unsigned char>(c)) == want; };
    const auto valid = [&](char c) { return is(c, 'N') || is(c, 'T'); };
    if (text.size() != 2 || !valid(text[0]) || !valid(text[1]))
        throw Error("unknown transposes " + single_quoted(text) + " (expected NN, NT, TN or TT)");
    key.trans_a = is(text[0], 'T');
    key.trans_b = is(text[1], 'T');
}

bool valid_alignment_class(int alignment) { return alignment == 16 || alignment == 8 || alignment == 4; }

std::size_t ShapeKeyHash::operator()(const ShapeKey& key) const {
    // splitmix64's finalizer over the fields packed into two words: cheap, and every bit of
    // the input reaches every bit of the hash.
    const auto mix = [](std::uint64_t x) {
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
    };
    const std::uint64_t dims = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.M)) << 32) ^
                               static_cast<std::uint32_t>(key.N);
    const std::uint64_t rest = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.K)) << 32) ^
                               (static_cast<std::uint64_t>(key.alignment) << 8) ^
                               (static_cast<std::uint64_t>(key.precision) << 2) ^
                               (static_cast<std::uint64_t>(key.trans_a) << 1) ^ static_cast<std::uint64_t>(key.trans_b);
    return static_cast<std::size_t>(mix(mix(dims) ^ rest));
}

int packed_alignment(const ShapeKey& key) {
    const void* aligned = reinterpret_cast<const void*>(256);
    if (key.K == 0) return alignment_class(aligned, key.N, aligned, key.N, aligned, key.N);
    const int lda = key.trans_a ? key.M : key.K;
    const int ldb = key.trans_b ? key.K : key.N;
    return alignment_class(aligned, lda, aligned, ldb, aligned, key.N);
}

}  // namespace sgemm
