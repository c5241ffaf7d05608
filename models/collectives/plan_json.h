// File: models/collectives/plan_json.h
//
// Writes a CollectivePlan as JSON, one chunk, step or transfer per line, so
// that golden files diff readably and the CLI can dump plans:
//
//   {"kind": "all_reduce", "group_size": 4, "total_bytes": 384,
//    "chunks": [{"size": 16}, {"size": 16, "origin": 2, "destination": 0}, ...],
//    "steps": [{"after": [0], "transfers": [
//        {"src": 0, "dst": 1, "size": 16, "op": "reduce", "chunks": [[3, 4]]}, ...],
//      "local_work": [{"rank": 1, "reduce_bytes": 16}, ...]}, ...]}
//
// Chunk ranges are [begin, end) pairs. A chunk without "origin" starts at
// every rank (a contribution); one without "destination" must reach every rank.

#ifndef ZIONSIM_MODELS_COLLECTIVES_PLAN_JSON_H_
#define ZIONSIM_MODELS_COLLECTIVES_PLAN_JSON_H_

#include <iosfwd>
#include <string>

#include "models/collectives/plan.h"

namespace zx::models::collectives {

void write_plan_json(std::ostream& out, const CollectivePlan& plan);
std::string plan_to_json(const CollectivePlan& plan);

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_PLAN_JSON_H_
