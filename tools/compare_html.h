#pragma once
/// compare.html of `aotc compare`: one self-contained page (inline SVG and script, nothing
/// loaded from elsewhere) with the targets side by side, a roofline plot per target, the
/// estimated and measured times, and one node's kernel source on every target (a selector).
#include <string>

#include <nlohmann/json.hpp>

#include "graph/status.h"

namespace aotc::tools {

/// Writes the page of compare.json's content (tools/compare_command.cpp builds it).
Status write_compare_html(const std::string& path, const nlohmann::json& page);

}  // namespace aotc::tools
