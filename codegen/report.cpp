#include "codegen/report.h"

#include <fmt/format.h>

#include "graph/printable.h"

namespace aotc::codegen {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // JSON text must be UTF-8; model names need not be (protobuf does not check): a byte
      // that is not part of a valid sequence is written as the text \xNN, as in messages.
      if (size_t len = utf8_sequence_length(s, i); len > 0) {
        out.append(s, i, len);
        i += len - 1;
      } else {
        out += fmt::format("\\\\x{:02x}", c);
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {

std::string tensors_json(const std::vector<ReportTensor>& tensors) {
  if (tensors.empty()) return "[]";
  std::string out = "[\n";
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ReportTensor& t = tensors[i];
    std::string dims;
    for (size_t k = 0; k < t.shape.size(); ++k) dims += (k ? ", " : "") + std::to_string(t.shape[k]);
    std::string padded;
    for (size_t k = 0; k < t.padded.size(); ++k) {
      padded += fmt::format("{}{{\"axis\": {}, \"symbol\": {}, \"offset\": {}}}", k ? ", " : "",
                            t.padded[k].axis, json_string(t.padded[k].symbol), t.padded[k].offset);
    }
    if (!t.padded.empty()) padded = fmt::format(", \"padded\": [{}]", padded);
    out += fmt::format("    {{\"name\": {}, \"dtype\": \"{}\", \"shape\": [{}]{}}}{}\n", json_string(t.name),
                       dtype_name(t.dtype), dims, padded, i + 1 < tensors.size() ? "," : "");
  }
  return out + "  ]";
}

std::string memory_json(const CompileReport& r) {
  std::string peak;
  for (size_t i = 0; i < r.peak_buffers.size(); ++i) {
    const ReportBuffer& b = r.peak_buffers[i];
    peak += fmt::format("      {{\"name\": {}, \"bytes\": {}, \"offset\": {}}}{}\n",
                        json_string(b.name), b.bytes, b.offset,
                        i + 1 < r.peak_buffers.size() ? "," : "");
  }
  std::string out = "  \"memory\": {\n";
  out += fmt::format("    \"arena_bytes\": {},\n", r.arena_bytes);
  out += fmt::format("    \"lower_bound_bytes\": {},\n", r.arena_lower_bound_bytes);
  out += fmt::format("    \"unshared_bytes\": {},\n", r.arena_unshared_bytes);
  out += fmt::format("    \"buffers\": {},\n", r.arena_buffers);
  out += fmt::format("    \"in_place\": {},\n", r.in_place);
  out += fmt::format("    \"zero_copy_views\": {},\n", r.zero_copy_views);
  out += fmt::format("    \"placement\": {},\n", json_string(r.placement));
  out += fmt::format("    \"peak\": {{\"step\": {}, \"node\": {}, \"tensors\": [{}{}]}},\n",
                     r.peak_step, json_string(r.peak_node), peak.empty() ? "" : "\n",
                     peak.empty() ? "" : peak + "    ");
  out += fmt::format("    \"timeline\": {}\n", json_string(r.memory_timeline));
  return out + "  },\n";
}

std::string ints_json(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + out + "]";
}

std::string buckets_json(const CompileReport& r) {
  std::string symbols, schedules;
  for (size_t i = 0; i < r.bucket_symbols.size(); ++i) symbols += (i ? ", " : "") + json_string(r.bucket_symbols[i]);
  for (size_t i = 0; i < r.buckets.size(); ++i) {
    const ReportBucket& b = r.buckets[i];
    schedules += fmt::format(
        "      {{\"sizes\": {}, \"min\": {}, \"arena_bytes\": {}, \"kernels\": {}, \"flops\": {}}}{}\n",
        ints_json(b.sizes), ints_json(b.min), b.arena_bytes, b.kernels, b.flops, i + 1 < r.buckets.size() ? "," : "");
  }
  return fmt::format("  \"buckets\": {{\n    \"symbols\": [{}],\n    \"staging_bytes\": {},\n"
                     "    \"schedules\": [\n{}    ]\n  }},\n",
                     symbols, r.staging_bytes, schedules);
}

std::string tile_kernels_json(const CompileReport& r) {
  std::string list;
  for (size_t i = 0; i < r.tile_kernels.size(); ++i) {
    const ReportTileKernel& k = r.tile_kernels[i];
    std::string mems;
    for (const ReportOnChip& m : k.on_chip)
      mems += fmt::format("{}{}: {{\"bytes\": {}, \"capacity\": {}}}", mems.empty() ? "" : ", ",
                          json_string(m.memory), m.bytes, m.capacity);
    list += fmt::format(
        "    {{\"name\": {}, \"cores\": {}, \"launches\": {}, \"max_blocks\": {}, "
        "\"on_chip\": {{{}}}, \"gm_bytes\": {}, \"cube_flops\": {}, \"roofline_us\": {:.3f}, "
        "\"roofline_bound\": {}}}{}\n",
        json_string(k.name), json_string(k.cores), k.launches, k.max_blocks, mems, k.gm_bytes,
        k.cube_flops, k.roofline_us, json_string(k.roofline_bound),
        i + 1 < r.tile_kernels.size() ? "," : "");
  }
  return "  \"tile_kernels\": [\n" + list + "  ],\n";
}

std::string distribution_json(const ReportDistribution& d) {
  std::string list;
  for (size_t i = 0; i < d.kernels.size(); ++i) {
    const ReportDistribution::Kernel& k = d.kernels[i];
    list += fmt::format("      {{\"node\": {}, \"op\": {}, \"strategy\": {}}}{}\n", json_string(k.node),
                        json_string(k.op), json_string(k.strategy), i + 1 < d.kernels.size() ? "," : "");
  }
  return fmt::format(
      "  \"distribution\": {{\n    \"tiles\": {},\n    \"dma_bytes_per_inference\": {},\n"
      "    \"always_spill_dma_bytes\": {},\n    \"repairs\": {{\"free_cast\": {}, \"halo_exchange\": {}, "
      "\"ddr_round_trip\": {}}},\n    \"kernels\": [\n{}    ]\n  }},\n",
      d.tiles, d.dma_bytes, d.always_spill_bytes, d.free_casts, d.halo_exchanges, d.ddr_round_trips, list);
}

}  // namespace

std::string report_to_json(const CompileReport& r) {
  std::string ops;
  for (auto& [op, count] : r.ops) ops += fmt::format("{}{}: {}", ops.empty() ? "" : ", ", json_string(op), count);
  std::string out = "{\n";
  out += fmt::format("  \"generated_by\": {},\n", json_string(r.generated_by));
  out += fmt::format("  \"name\": {},\n", json_string(r.name));
  out += fmt::format("  \"target\": {},\n", json_string(r.target));
  out += fmt::format("  \"model\": {},\n", json_string(r.model));
  out += fmt::format("  \"model_hash\": {},\n", json_string(r.model_hash));
  out += fmt::format("  \"onnx_nodes\": {},\n", r.onnx_nodes);
  out += fmt::format("  \"kernels\": {},\n", r.kernels);
  out += fmt::format("  \"kernel_functions\": {},\n", r.kernel_functions);
  out += fmt::format("  \"ops\": {{{}}},\n", ops);
  out += fmt::format("  \"flops\": {},\n", r.flops);
  out += memory_json(r);
  if (!r.buckets.empty()) out += buckets_json(r);
  if (!r.tile_kernels.empty()) out += tile_kernels_json(r);
  if (r.distribution.tiles > 0) out += distribution_json(r.distribution);
  out += fmt::format("  \"weights_bytes\": {},\n", r.weights_bytes);
  out += fmt::format("  \"weights\": {{\"constants\": {}, \"storage\": {}}},\n", r.weights_constants,
                     json_string(r.weights_storage));
  out += fmt::format("  \"inputs\": {},\n", tensors_json(r.inputs));
  out += fmt::format("  \"outputs\": {}\n", tensors_json(r.outputs));
  return out + "}\n";
}

}  // namespace aotc::codegen
