// File: topology/degrade.h
//
// Degraded hardware: what-ifs about parts of a cluster that run below their
// rated speed while the rest is healthy. A straggling GPU (thermal or power
// throttling, a noisy neighbour), a NIC that negotiated half its rate, a
// flapping switch port: in synchronous training every GPU waits for the
// slowest, so one slow part can cost the whole cluster. The
// `--degrade SELECTOR=SPEED` flag of every command that builds a cluster
// reads these.
//
// Selectors (SPEED is the share of the rated speed left, in [0.001, 1]; 0
// fails a link or switch between switches: it leaves the graph, routes avoid it):
//   gpu:R           GPU rank R computes at SPEED: its kernels take 1/SPEED as long
//   gpu:A-B         ranks A..B (inclusive)
//   node:N, node:A-B  every GPU of server N (servers A..B)
//   link:SRC->DST   the directed link(s) from device SRC to device DST carry
//                   SPEED of their bandwidth ("node0/nic0->rack0/rsw", as the
//                   busiest-link column names them)
//   device:NAME     every link into or out of device NAME ("node3/nic2": the
//                   NIC's PCIe and Ethernet sides; "spine1": a whole switch)
//
// Degradations of one part multiply. Routes do not steer around a slow link
// (ECMP hashes flows over equal-cost paths whatever their speed) and
// latencies do not change. Only links whose two ends are Ethernet switches
// can fail (every GPU leaves through its own NIC), and failures that cut one
// edge switch off from another are refused.

#ifndef ZIONSIM_TOPOLOGY_DEGRADE_H_
#define ZIONSIM_TOPOLOGY_DEGRADE_H_

#include <string>
#include <string_view>
#include <vector>

#include "topology/topology.h"

namespace zx::topology {

struct Degradation {
  enum class Target { kGpu, kNode, kLink, kDevice };
  Target target = Target::kGpu;
  int first_rank = 0;  ///< kGpu: ranks first_rank..last_rank; kNode: servers
  int last_rank = 0;
  std::string src;     ///< kLink: the link's endpoints' names
  std::string dst;
  std::string device;  ///< kDevice: the device's name
  double speed = 1.0;  ///< share of the rated speed, in (0, 1]
  std::string text;    ///< as the user wrote it: "gpu:3=0.5"
  /// Where it was given, for messages: a cluster file and the JSON pointer
  /// ("/degrade/1"); empty source: a command-line flag.
  std::string source;
  std::string location;
};

/// Parses "SELECTOR=SPEED". Throws zx::InputError naming `flag` for a bad
/// selector or speed.
Degradation parse_degradation(std::string_view text, std::string_view flag = "--degrade");

/// True when any of `degradations` slows GPUs (rather than links).
bool degrades_gpus(const std::vector<Degradation>& degradations);

/// The cluster with its degraded links: same nodes, and links in the same
/// order with bandwidths scaled (ids unchanged unless a link failed: failed
/// links are left out). Returns `topology` itself when no link is degraded.
/// Throws zx::InputError naming `flag` for a device or link that does not
/// exist (with the closest name), a GPU rank out of range, a failed link
/// that is not between switches, or failures that disconnect the fabric.
Topology degrade_links(const Topology& topology, const std::vector<Degradation>& degradations,
                       std::string_view flag = "--degrade");

/// Compute speed per GPU rank (1 for healthy GPUs); empty when no GPU is
/// degraded. Throws zx::InputError naming `flag` for a rank out of range.
std::vector<double> gpu_speeds(const Topology& topology, const std::vector<Degradation>& degradations,
                               std::string_view flag = "--degrade");

}  // namespace zx::topology

#endif  // ZIONSIM_TOPOLOGY_DEGRADE_H_
