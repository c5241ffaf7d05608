// File: models/collectives/plan_json.cc
//
// The plan JSON writer (see plan_json.h). Only integers and fixed names are
// written, so no escaping is needed.

#include "models/collectives/plan_json.h"

#include <fmt/format.h>

#include <ostream>
#include <sstream>

namespace zx::models::collectives {

void write_plan_json(std::ostream& out, const CollectivePlan& plan) {
  out << fmt::format("{{\n  \"kind\": \"{}\",\n  \"group_size\": {},\n  \"total_bytes\": {},\n",
                     to_string(plan.kind), plan.group_size, total_bytes(plan).count());
  out << "  \"chunks\": [";
  for (std::size_t c = 0; c < plan.chunks.size(); ++c) {
    const Chunk& chunk = plan.chunks[c];
    out << (c == 0 ? "\n" : ",\n") << fmt::format("    {{\"size\": {}", chunk.size.count());
    if (chunk.origin) out << fmt::format(", \"origin\": {}", *chunk.origin);
    if (chunk.destination) out << fmt::format(", \"destination\": {}", *chunk.destination);
    out << "}";
  }
  out << (plan.chunks.empty() ? "],\n" : "\n  ],\n");
  out << "  \"steps\": [";
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    out << (s == 0 ? "\n" : ",\n")
        << fmt::format("    {{\"after\": [{}], \"transfers\": [", fmt::join(step.after, ", "));
    for (std::size_t t = 0; t < step.transfers.size(); ++t) {
      const Transfer& x = step.transfers[t];
      std::vector<std::string> ranges;
      for (const ChunkRange& r : x.chunks)
        ranges.push_back(fmt::format("[{}, {}]", r.begin, r.end));
      out << (t == 0 ? "\n" : ",\n")
          << fmt::format(
                 "      {{\"src\": {}, \"dst\": {}, \"size\": {}, \"op\": \"{}\", \"chunks\": "
                 "[{}]{}}}",
                 x.src, x.dst, x.size.count(), to_string(x.op), fmt::join(ranges, ", "),
                 x.relay ? fmt::format(", \"relay\": {}", *x.relay) : std::string());
    }
    out << (step.transfers.empty() ? "]" : "\n    ]") << ", \"local_work\": [";
    for (std::size_t w = 0; w < step.local_work.size(); ++w) {
      out << (w == 0 ? "" : ", ")
          << fmt::format("{{\"rank\": {}, \"reduce_bytes\": {}}}", step.local_work[w].rank,
                         step.local_work[w].reduce_bytes.count());
    }
    out << "]}";
  }
  out << (plan.steps.empty() ? "]\n" : "\n  ]\n") << "}\n";
}

std::string plan_to_json(const CollectivePlan& plan) {
  std::ostringstream out;
  write_plan_json(out, plan);
  return out.str();
}

}  // namespace zx::models::collectives
