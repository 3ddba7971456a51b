// What sgemm-shapes and sgemm-roofline share on their command lines: choosing the model
// (a built-in name, also as the first positional argument, or --config FILE) and --batch.
#pragma once
#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "tuner/decode/model_config.h"

namespace sgemm {

// Adds --model, --config and --batch (with `default_batches`); the first positional argument is
// the model's name.
void add_model_options(boost::program_options::options_description& options,
                       boost::program_options::positional_options_description& positional,
                       const std::string& default_batches);

// Parses argv into `vm`; bad options throw boost::program_options::error.
boost::program_options::variables_map parse_command_line(int argc, char** argv,
                                                         const boost::program_options::options_description& options,
                                                         const boost::program_options::positional_options_description& positional);

// Exactly one of --model and --config; a bad name or file throws sgemm::Error. Reading
// --config - from a terminal, it says so first, as `tool`.
ModelConfig model_from_options(const boost::program_options::variables_map& vm, const char* tool);

// "1,8,32" -> {1, 8, 32}; anything but distinct positive integers throws
// boost::program_options::error.
std::vector<long> batches_from_options(const boost::program_options::variables_map& vm);

// The command as typed, for a comment saying what made a file: "sgemm-shapes llama-3-8b ...".
std::string command_line(const char* tool, int argc, char** argv);

}  // namespace sgemm
