// File: experiments/whatif_codec.h
//
// A what-if point as JSON, losslessly: what an MPI rank sends rank 0 and
// what a shard file keeps (experiments/sweep_shards.h), so that the point printed
// after the trip is the point simulated, to the bit. Doubles are written with
// nlohmann's shortest round-trip form (non-finite ones as the strings "inf",
// "-inf", "nan"); 64-bit counters as numbers. The graph, the execution and
// the network activity kept for --timeline are not carried (a distributed
// sweep writes no timeline).
//
// A task's outcome is either its point or the error it threw, carried so
// that rank 0 (or merge) rethrows what the one-process run would have
// thrown: input errors with their diagnostics, range errors, invariant
// failures, interruptions.

#ifndef ZIONSIM_EXPERIMENTS_WHATIF_CODEC_H_
#define ZIONSIM_EXPERIMENTS_WHATIF_CODEC_H_

#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/whatif.h"

namespace zx::experiments {

nlohmann::ordered_json whatif_point_to_json(const WhatIfPoint& point);

/// Pieces of the codec for other commands' results: a double (non-finite
/// as "inf", "-inf", "nan"), the auto-tuner's choices and candidates. The
/// decoders throw zx::InputError naming `source` and the pointer `where`.
nlohmann::ordered_json encode_real(double x);
double decode_real(const nlohmann::json& v, const std::string& source, const std::string& where);
nlohmann::ordered_json encode_auto_choices(const std::vector<models::AutoChoice>& choices);
std::vector<models::AutoChoice> decode_auto_choices(const nlohmann::json& list, const std::string& source,
                                                    const std::string& where);
nlohmann::ordered_json encode_candidates(const std::vector<models::AutoChoice::Candidate>& candidates);
std::vector<models::AutoChoice::Candidate> decode_candidates(const nlohmann::json& list, const std::string& source,
                                                             const std::string& where);

/// A choice's candidates as the outputs write them (docs/output_formats.md):
/// `algorithm` and `time_us`, `slower_than_us` or `refused`. Not lossless:
/// encode_candidates is.
nlohmann::ordered_json candidates_json(const std::vector<models::AutoChoice::Candidate>& candidates);

/// Throws zx::InputError naming `source` and the JSON pointer below `where`
/// for a document that is not one whatif_point_to_json wrote.
WhatIfPoint whatif_point_from_json(const nlohmann::json& doc, const std::string& source, const std::string& where);

/// An exception as JSON ({"kind": "input", "diagnostics": [...]}, or
/// interrupted, range, invariant, other with a message), and back: throws
/// what was thrown (zx::InputError naming `source`, `where` for a malformed
/// one).
nlohmann::ordered_json error_to_json(std::exception_ptr error);
[[noreturn]] void rethrow_error_json(const nlohmann::json& error, const std::string& source, const std::string& where);

/// {"point": ...} for a point, {"error": ...} for the exception `error`.
nlohmann::ordered_json task_outcome_to_json(const WhatIfPoint* point, std::exception_ptr error);

/// The point of an outcome; rethrows the error of one that failed.
/// Throws zx::InputError (naming `source`, `where`) for a malformed outcome.
WhatIfPoint point_or_rethrow(const nlohmann::json& outcome, const std::string& source, const std::string& where);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_WHATIF_CODEC_H_
