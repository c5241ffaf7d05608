// File: models/network/bundle_builder.h
//
// Builds a linkshare bundle (link_share.h) from many transfers between GPUs
// without routing each one whole.
//
// A bundle is, per link, the bytes and the count of the transfers crossing
// it, in the order the links were first touched, and the largest first-byte
// delay. Routing every transfer and adding its links one by one gives that
// at a cost per transfer and link: an all-to-all of 8,192 GPUs is 67 M
// transfers of about ten links, and that was half of model A's time at
// 1,024 ZionEX nodes. Most of a route does not depend on its pair: a GPU's
// way to its NIC and the NIC's link to its switch are the same for every
// peer on another server (Router::fixed_uplink), and so is the way in
// (fixed_downlink). So a transfer between servers adds its bytes to its
// source's way out and its destination's way in (one sum each per GPU) and
// walks only the fabric between the two switches, where ECMP picks per key;
// the sums are spread over the fixed links once, at flush().
//
// The result is exactly the bundle of LinkShareNetwork::add per transfer:
// the same sums (whole numbers of bytes and transfers, exact in a double in
// any order), the same largest delay (integer picoseconds), and the same
// order of first touches, kept as (transfer number, position on its route)
// per link and sorted at flush. Transfers inside a server, and GPUs without
// fixed paths, are routed whole as before.

#ifndef ZIONSIM_MODELS_NETWORK_BUNDLE_BUILDER_H_
#define ZIONSIM_MODELS_NETWORK_BUNDLE_BUILDER_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "models/network/link_share.h"
#include "models/network/topology_links.h"
#include "sim/time.h"
#include "sim/units.h"
#include "topology/router.h"

namespace zx::models {

class BundleBuilder {
 public:
  /// `share` was built from link_params(router.topology()).
  BundleBuilder(const topology::Router& router, LinkShareNetwork& share);

  /// As routing GPU `src_rank` to `dst_rank` with `flow_key` (route_gpus)
  /// and LinkShareNetwork::add(route, size, 1, added_latency). Throws as
  /// route_gpus for a rank out of range or an unreachable destination.
  void add_gpu_transfer(int src_rank, int dst_rank, sim::Bytes size, std::uint64_t flow_key,
                        sim::Duration added_latency);
  /// As LinkShareNetwork::add(links, size, 1, added_latency), for a
  /// transfer the caller routed.
  void add_routed(std::span<const std::uint32_t> links, sim::Bytes size, sim::Duration added_latency);
  /// Adds what was added since the last flush to the network's bundle
  /// being built (then started with LinkShareNetwork::start).
  void flush();

  /// Transfers added through the fixed paths, and routed whole, so far.
  std::uint64_t split_transfers() const { return split_; }
  std::uint64_t whole_transfers() const { return whole_; }

 private:
  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
  // A route's links get positions below 2^kPositionBits.
  static constexpr int kPositionBits = 16;
  static constexpr std::uint64_t kMaxTransfers = std::uint64_t{1} << 47;
  struct Sum {
    std::int64_t bytes = 0;
    std::int64_t count = 0;
    std::uint64_t first = kNever;  // (transfer << kPositionBits) + position of the first touch
  };
  struct FixedLinks {
    std::vector<std::uint32_t> links;
    sim::Duration latency = sim::Duration::zero();
    topology::NodeId fabric_switch{};
  };
  struct GpuPaths {
    std::optional<FixedLinks> up;
    std::optional<FixedLinks> down;
  };
  const GpuPaths& paths(int rank);
  void touch(std::uint32_t link, std::int64_t bytes, std::int64_t count, std::uint64_t first);
  static void add_side(std::vector<Sum>& sides, std::vector<int>& touched, int rank, std::int64_t bytes,
                       std::uint64_t first);

  const topology::Router& router_;
  LinkShareNetwork& share_;
  std::vector<std::optional<GpuPaths>> paths_;  // by rank, found on first use
  std::vector<int> server_;                     // by rank
  std::vector<sim::Duration> latency_of_;       // by link
  std::vector<Sum> links_;                      // by link index
  std::vector<std::uint32_t> touched_links_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order_;  // (first touch, link), for flush
  std::vector<Sum> out_;  // by source rank: bytes on its fixed way out
  std::vector<Sum> in_;   // by destination rank: on its fixed way in
  std::vector<int> touched_out_;
  std::vector<int> touched_in_;
  std::uint64_t transfers_ = 0;  // since the last flush
  std::int64_t size_ = 0;
  sim::Duration latency_ = sim::Duration::zero();
  topology::Route middle_;
  RouteScratch scratch_;
  std::uint64_t split_ = 0;
  std::uint64_t whole_ = 0;
};

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_NETWORK_BUNDLE_BUILDER_H_
