// The shape key: everything about a GEMM call that changes which kernel is best, or which
// kernels may run at all. The tuner stores winners under it, dispatch looks winners up by
// it, and the database keys its winners, measurements and misses by it. This is the one
// place that defines it.
//
//   M, N, K         C (M x N) = op(A) (M x K) * op(B) (K x N), row-major, as everywhere here.
//   trans_a/b       whether A / B are stored transposed ("NN", "NT", "TN", "TT").
//   precision       the math: fp32 (IEEE FMA, cuBLAS's default math) or tf32 (inputs rounded
//                   to TF32 for tensor cores). A winner never serves the other precision.
//   alignment       the alignment class of the call's operands: the largest of 16, 8 and 4
//                   bytes that every pointer (A, B, C) and every leading dimension in bytes
//                   (lda*4, ldb*4, ldc*4) is a multiple of. It decides whether 16-byte
//                   (float4) loads are legal, so a kernel tuned on 16-byte-aligned operands
//                   is never handed a call of a lower class.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace sgemm {

enum class GemmPrecision { fp32, tf32 };

// "fp32" or "tf32"; anything else is an Error naming the choices.
GemmPrecision parse_gemm_precision(const std::string& text);
std::string to_string(GemmPrecision precision);

struct ShapeKey {
    int M = 0, N = 0, K = 0;
    bool trans_a = false, trans_b = false;
    GemmPrecision precision = GemmPrecision::fp32;
    int alignment = 16;  // 16, 8 or 4: see alignment_class

    // "NN", "NT", "TN" or "TT".
    std::string transposes() const;
    // "M=8 N=4096 K=4096 NN fp32 align16": the text form in messages and listings.
    std::string to_string() const;

    bool operator==(const ShapeKey& o) const {
        return M == o.M && N == o.N && K == o.K && trans_a == o.trans_a && trans_b == o.trans_b &&
               precision == o.precision && alignment == o.alignment;
    }
    bool operator!=(const ShapeKey& o) const { return !(*this == o); }
};

// The alignment class of a call: 16, 8 or 4 as above, or 0 when some pointer or leading
// dimension is not even float-aligned (no kernel may run such a call). Cheap enough for
// dispatch's hot path: one OR over the six values and two tests.
inline int alignment_class(const void* A, std::int64_t lda, const void* B, std::int64_t ldb, const void* C,
                           std::int64_t ldc) {
    const std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(A) | reinterpret_cast<std::uintptr_t>(B) |
                                reinterpret_cast<std::uintptr_t>(C) | static_cast<std::uintptr_t>(lda * 4) |
                                static_cast<std::uintptr_t>(ldb * 4) | static_cast<std::uintptr_t>(ldc * 4);
    if (bits % 16 == 0) return 16;
    if (bits % 8 == 0) return 8;
    if (bits % 4 == 0) return 4;
    return 0;
}

// The alignment class of `key`'s call with its matrices packed tightly (lda, ldb and ldc the
// rows' lengths) at aligned addresses: what the tuner's own buffers give a shape, so the key
// it tunes and stores the shape under, and what `sgemm-db show M N K` looks up by default.
// A key of K = 0 computes no product, and dispatch aligns such a call as C alone
// (src/dispatch/gemm_call.h): so does this.
int packed_alignment(const ShapeKey& key);

// Parses "NN", "NT", "TN" or "TT" (either case, white space around it left out) into trans_a
// and trans_b; throws an Error naming the choices.
void parse_transposes(const std::string& text, ShapeKey& key);

// True for the alignment classes a key may hold: 16, 8 and 4.
bool valid_alignment_class(int alignment);

// Combines every field, for unordered_map<ShapeKey, ...> in dispatch.
struct ShapeKeyHash {
    std::size_t operator()(const ShapeKey& key) const;
};

}  // namespace sgemm

namespace std {
template <>
struct hash<sgemm::ShapeKey> : sgemm::ShapeKeyHash {};
}  // namespace std
