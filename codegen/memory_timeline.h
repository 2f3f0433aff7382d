#pragma once
/// The package's picture of its arena: an SVG with one rectangle per buffer, spanning the kernel
/// steps during which it is live (x) and the bytes it occupies (y), so a person can see where
/// the memory goes, what is live at the peak and how close the placement is to the lower bound.
/// Hovering a rectangle shows the tensor, its size, offset and steps. memory_plan.csv holds the
/// same facts for scripts.
#include <string>

#include "passes/plan_memory.h"

namespace aotc::codegen {

/// The SVG document (deterministic: the same plan gives the same bytes). `title` names the model.
std::string render_memory_timeline(const ArenaPlan& plan, const std::string& title);

/// The same plan as CSV for tools: one row per buffer (label, bytes, offset, first and last
/// step), after a `#` comment line with the banner and the arena and lower-bound sizes.
std::string render_memory_plan_csv(const ArenaPlan& plan, const std::string& banner);

}  // namespace aotc::codegen
