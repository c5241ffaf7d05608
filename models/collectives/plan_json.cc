// File: models/collectives/plan_json.cc
//
// The plan JSON writer (see plan_json.h). Only integers and fixed names are
// written, so no escaping is needed; records are formatted straight into one
// bounded buffer (base/text_out.h).

#include "models/collectives/plan_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>
#include <sstream>

#include "base/text_out.h"

namespace zx::models::collectives {

void write_plan_json(std::ostream& stream, const CollectivePlan& plan) {
  if (plan.generator) {
    write_plan_json(stream, materialize(plan));
    return;
  }
  TextOut out(stream);
  out.print("{{\n  \"kind\": \"{}\",\n  \"group_size\": {},\n  \"total_bytes\": {},\n", to_string(plan.kind),
            plan.group_size, total_bytes(plan).count());
  out.put("  \"chunks\": [");
  for (std::size_t c = 0; c < plan.chunks.size(); ++c) {
    const Chunk& chunk = plan.chunks[c];
    out.print("{}    {{\"size\": {}", c == 0 ? "\n" : ",\n", chunk.size.count());
    if (chunk.origin) out.print(", \"origin\": {}", *chunk.origin);
    if (chunk.destination) out.print(", \"destination\": {}", *chunk.destination);
    out.put('}');
  }
  out.put(plan.chunks.empty() ? "],\n" : "\n  ],\n");
  out.put("  \"steps\": [");
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    out.print("{}    {{\"after\": [{}], \"transfers\": [", s == 0 ? "\n" : ",\n", fmt::join(step.after, ", "));
    for (std::size_t t = 0; t < step.transfers.size(); ++t) {
      const Transfer& x = step.transfers[t];
      out.print("{}      {{\"src\": {}, \"dst\": {}, \"size\": {}, \"op\": \"{}\", \"chunks\": [", t == 0 ? "\n" : ",\n",
                x.src, x.dst, x.size.count(), to_string(x.op));
      for (std::size_t r = 0; r < x.chunks.size(); ++r) {
        out.print("{}[{}, {}]", r == 0 ? "" : ", ", x.chunks[r].begin, x.chunks[r].end);
      }
      out.put(']');
      if (x.relay) out.print(", \"relay\": {}", *x.relay);
      out.put('}');
    }
    out.put(step.transfers.empty() ? "]" : "\n    ]");
    out.put(", \"local_work\": [");
    for (std::size_t w = 0; w < step.local_work.size(); ++w) {
      out.print("{}{{\"rank\": {}, \"reduce_bytes\": {}}}", w == 0 ? "" : ", ", step.local_work[w].rank,
                step.local_work[w].reduce_bytes.count());
    }
    out.put("]}");
  }
  out.put(plan.steps.empty() ? "]\n" : "\n  ]\n");
  out.put("}\n");
}

std::string plan_to_json(const CollectivePlan& plan) {
  std::ostringstream out;
  write_plan_json(out, plan);
  return out.str();
}

}  // namespace zx::models::collectives
