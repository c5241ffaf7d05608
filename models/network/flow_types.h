// File: models/network/flow_types.h
//
// What the network models share: a link's parameters and the records of
// what happened to a flow and to a link.

#ifndef ZIONSIM_MODELS_NETWORK_FLOW_TYPES_H_
#define ZIONSIM_MODELS_NETWORK_FLOW_TYPES_H_

#include "sim/time.h"
#include "sim/units.h"

namespace zx::models {

/// A link as the network model sees it.
struct LinkParams {
  double capacity_bytes_per_s;  ///< effective: bandwidth x protocol efficiency; > 0
  sim::Duration latency;        ///< propagation + switching; >= 0
};

/// What happened to one flow.
struct FlowRecord {
  sim::TimePoint start;
  sim::TimePoint first_byte;
  sim::TimePoint finish;  ///< TimePoint::max() while not finished
  sim::Bytes size;
  bool finished() const { return !finish.is_max(); }
};

/// What happened on one link.
struct LinkRecord {
  sim::Bytes bytes_carried;  ///< sum of the sizes of the finished flows crossing it
  sim::Duration busy_time;   ///< time during which at least one flow was transferring on it
};

/// A link's utilisation from `time` on: the sum of its flows' rates over its
/// capacity.
struct LinkUtilisationSample {
  sim::TimePoint time;
  double utilisation;
};

/// The time to move `bytes` at `rate_bytes_per_s`, rounded up to the
/// picosecond: the one place where the model's doubles become time.
sim::Duration transfer_time(double bytes, double rate_bytes_per_s);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_NETWORK_FLOW_TYPES_H_
