#pragma once
/// Subcommands of the aotc CLI; each lives in its own file and adds itself to the app.
#include <CLI/CLI.hpp>

namespace aotc::tools {

/// `aotc compile MODEL --target T -o DIR ...` (compile_command.cpp).
void add_compile_command(CLI::App& app);
/// `aotc tune MODEL --target T -o tuning.json` (tune_command.cpp).
void add_tune_command(CLI::App& app);
/// `aotc inspect MODEL` (inspect_command.cpp).
void add_inspect_command(CLI::App& app);
/// `aotc targets` (targets_command.cpp).
void add_targets_command(CLI::App& app);
/// `aotc ops [--markdown]`: converters, core ops and kernels per target (ops_command.cpp).
void add_ops_command(CLI::App& app);
/// `aotc eval MODEL --input FILE.pb ...`: runs the reference interpreter (eval_command.cpp).
void add_eval_command(CLI::App& app);
/// `aotc verify MODEL --target T -o DIR`: per-kernel error against the reference (verify_command.cpp).
void add_verify_command(CLI::App& app);
/// `aotc compare MODEL --targets A,B -o compare.html`: targets side by side (compare_command.cpp).
void add_compare_command(CLI::App& app);
/// `aotc opt FILE.aotc --pass=NAME`: runs passes on textual IR, for golden tests (opt_command.cpp).
void add_opt_command(CLI::App& app);

}  // namespace aotc::tools
