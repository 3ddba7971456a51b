#include "tuner/tune_report.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "src/util/error.h"

namespace sgemm {

namespace {

// Both ends are one build of one program (the child is a fork of the parent), so numbers
// travel in the machine's own layout; what must be caught is a report cut short.
constexpr char kMagic[] = "sgemm-tune report";

class Writer {
public:
    static constexpr bool reading = false;
    template <class Number, std::enable_if_t<std::is_arithmetic_v<Number> || std::is_enum_v<Number>, int> = 0>
    void operator()(Number& value) {
        bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
    }
    void operator()(std::string& text) {
        std::uint64_t size = text.size();
        (*this)(size);
        bytes_ += text;
    }
    const std::string& bytes() const { return bytes_; }

private:
    std::string bytes_;
};

class Reader {
public:
    static constexpr bool reading = true;
    explicit Reader(const std::string& bytes) : bytes_(bytes) {}
    template <class Number, std::enable_if_t<std::is_arithmetic_v<Number> || std::is_enum_v<Number>, int> = 0>
    void operator()(Number& value) {
        std::memcpy(&value, take(sizeof value), sizeof value);
    }
    void operator()(std::string& text) {
        std::uint64_t size = 0;
        (*this)(size);
        if (size > left()) cut_short();
        text.assign(take(size), size);
    }
    std::size_t left() const { return bytes_.size() - at_; }
    [[noreturn]] static void cut_short() {
        throw Error("the tune's report from its child process is cut short or damaged");
    }

private:
    const char* take(std::size_t size) {
        if (size > left()) cut_short();
        const char* start = bytes_.data() + at_;
        at_ += size;
        return start;
    }
    const std::string& bytes_;
    std::size_t at_ = 0;
};

// Each struct's fields are listed once, for both directions: the Writer reads them, the
// Reader assigns them.
template <class Io, class Item>
void carry(Io& io, std::vector<Item>& items);

template <class Io>
void carry(Io& io, std::vector<int>& values) {
    std::uint64_t size = values.size();
    io(size);
    if constexpr (Io::reading) {
        if (size > io.left() / sizeof(int)) Io::cut_short();
        values.resize(size);
    }
    for (int& v : values) io(v);
}

template <class Io>
void carry(Io& io, DeviceInfo& d) {
    io(d.ordinal), io(d.name), io(d.cc_major), io(d.cc_minor), io(d.sm_count), io(d.global_memory_bytes),
        io(d.l2_bytes), io(d.driver_version), io(d.runtime_version);
}

template <class Io>
void carry(Io& io, ShapeKey& k) {
    io(k.M), io(k.N), io(k.K), io(k.trans_a), io(k.trans_b), io(k.precision), io(k.alignment);
}

template <class Io>
void carry(Io& io, ShapeRow& r) {
    carry(io, r.key);
    io(r.weight), io(r.name), io(r.line);
}

template <class Io>
void carry(Io& io, KernelRef& k) {
    io(k.family);
    carry(io, k.params);
    io(k.description), io(k.template_hash);
}

template <class Io>
void carry(Io& io, Winner& w) {
    io(w.device_id);
    carry(io, w.shape);
    carry(io, w.kernel);
    io(w.binary_key), io(w.ms), io(w.cublas_ms), io(w.tolerance), io(w.provenance), io(w.narrowed_by), io(w.tuned_at),
        io(w.speedup), io(w.tflops);
}

template <class Io>
void carry(Io& io, Accuracy& a) {
    io(a.max_abs_err), io(a.rel_err_norm), io(a.max_scaled_err), io(a.tolerance), io(a.rms_scaled_err),
        io(a.rms_tolerance), io(a.nonfinite), io(a.reference_nonfinite), io(a.worst_row), io(a.worst_col),
        io(a.outside_writes), io(a.first_outside), io(a.workspace_declared), io(a.workspace_overrun),
        io(a.counters_left);
}

template <class Io>
void carry(Io& io, ShapeOutcome& o) {
    carry(io, o.row);
    io(o.skipped), io(o.earlier_narrowed_by), io(o.earlier_without_atomics), io(o.interrupted), io(o.fault),
        io(o.untried);
    carry(io, o.winner);
    bool judged = o.winner_accuracy.has_value();
    io(judged);
    if (judged) {
        if constexpr (Io::reading) o.winner_accuracy.emplace();
        carry(io, *o.winner_accuracy);
    }
    io(o.candidates), io(o.left_out_faulted), io(o.invalid), io(o.rejected), io(o.compiled), io(o.cache_hits),
        io(o.seconds), io(o.compile_seconds), io(o.exhaustive_best_ms), io(o.model_best_ms);
}

template <class Io, class Item>
void carry(Io& io, std::vector<Item>& items) {
    std::uint64_t size = items.size();
    io(size);
    if constexpr (Io::reading) {
        if (size > io.left()) Io::cut_short();  // each item takes at least a byte
        items.resize(size);
    }
    for (Item& item : items) carry(io, item);
}

template <class Io>
void carry(Io& io, TuneReport& r) {
    carry(io, r.device);
    io(r.database), io(r.shapes_source);
    carry(io, r.rows);
    carry(io, r.outcomes);
    io(r.seconds), io(r.peak_flops), io(r.bytes_per_s), io(r.signal);
}

}  // namespace

std::string encode_tune_report(const TuneReport& report) {
    Writer writer;
    std::string magic = kMagic;
    writer(magic);
    TuneReport copy = report;  // carry takes what it lists by reference, to assign it when reading
    carry(writer, copy);
    return writer.bytes();
}

TuneReport decode_tune_report(const std::string& bytes) {
    Reader reader(bytes);
    std::string magic;
    reader(magic);
    if (magic != kMagic) Reader::cut_short();
    TuneReport report;
    carry(reader, report);
    if (reader.left() != 0) Reader::cut_short();
    return report;
}

}  // namespace sgemm
