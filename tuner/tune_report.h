// What one process of a tune hands back: sgemm-tune runs the tune in a child process, since a
// candidate that faults the GPU loses that process's CUDA context for good, and the run goes on
// in a new child from the shape the fault cut short. The parent, which never touches the GPU,
// gathers the children's reports and prints the table of the whole run. The report travels as
// bytes through a pipe: encode_tune_report, then decode_tune_report on the other side.
#pragma once
#include <string>
#include <vector>

#include "src/cuda/device.h"
#include "tuner/shapes_csv.h"
#include "tuner/tuner.h"

namespace sgemm {

// Every field of the structs carried here (DeviceInfo, ShapeRow, ShapeOutcome with its Winner
// and Accuracy) travels: a field added to one of them must be added to tune_report.cpp too, and
// to the round trip in tests/tuner/test_tune_report.cpp.
struct TuneReport {
    DeviceInfo device;
    std::string database;       // the store's path, as the table and the messages name it
    std::string shapes_source;  // the shapes file's name, or "the misses of device ..."
    std::vector<ShapeRow> rows;  // every shape of the run, in order
    // The shapes this process finished, in order, from the one it began with; the last may be
    // cut short by a stop (interrupted) or a fault (ShapeOutcome::fault).
    std::vector<ShapeOutcome> outcomes;
    double seconds = 0;  // spent tuning, after the setup
    // The table's ceilings, device_model(device)'s: for a GPU that is not built in, they are
    // read through CUDA, which the parent never touches.
    double peak_flops = 0, bytes_per_s = 0;
    int signal = 0;  // the signal that stopped the process's tune (interrupt_signal), or 0
};

std::string encode_tune_report(const TuneReport& report);
// Throws Error on bytes that are not one whole report (a child that died while writing it).
TuneReport decode_tune_report(const std::string& bytes);

}  // namespace sgemm
