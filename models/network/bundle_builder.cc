#include "models/network/bundle_builder.h"

#include <algorithm>

#include "base/check.h"

namespace zx::models {

BundleBuilder::BundleBuilder(const topology::Router& router, LinkShareNetwork& share)
    : router_(router), share_(share) {
  const topology::Topology& t = router.topology();
  const auto gpus = static_cast<std::size_t>(t.num_gpus());
  paths_.resize(gpus);
  out_.resize(gpus);
  in_.resize(gpus);
  for (int r = 0; r < t.num_gpus(); ++r) server_.push_back(t.node(t.gpu(r)).server);
  links_.resize(share.num_links());
  for (std::uint32_t l = 0; l < share.num_links(); ++l) latency_of_.push_back(share.link_latency(l));
}

const BundleBuilder::GpuPaths& BundleBuilder::paths(int rank) {
  std::optional<GpuPaths>& p = paths_[static_cast<std::size_t>(rank)];
  if (p) return *p;
  const topology::NodeId gpu = router_.topology().gpu(rank);
  const auto fixed = [&](const std::optional<topology::Router::FixedPath>& path) -> std::optional<FixedLinks> {
    if (!path) return std::nullopt;
    FixedLinks f;
    f.fabric_switch = path->fabric_switch;
    for (topology::LinkId l : path->links) {
      f.links.push_back(topology::index(l));
      f.latency += latency_of_[topology::index(l)];
    }
    return f;
  };
  p = GpuPaths{.up = fixed(router_.fixed_uplink(gpu)), .down = fixed(router_.fixed_downlink(gpu))};
  return *p;
}

void BundleBuilder::touch(std::uint32_t link, std::int64_t bytes, std::int64_t count, std::uint64_t first) {
  Sum& s = links_[link];
  if (s.count == 0) touched_links_.push_back(link);
  s.bytes += bytes;
  s.count += count;
  s.first = std::min(s.first, first);
}

void BundleBuilder::add_side(std::vector<Sum>& sides, std::vector<int>& touched, int rank, std::int64_t bytes,
                             std::uint64_t first) {
  Sum& s = sides[static_cast<std::size_t>(rank)];
  if (s.count == 0) {
    touched.push_back(rank);
    s.first = first;
  }
  s.bytes += bytes;
  ++s.count;
}

void BundleBuilder::add_gpu_transfer(int src_rank, int dst_rank, sim::Bytes size, std::uint64_t flow_key,
                                     sim::Duration added_latency) {
  const auto gpus = static_cast<int>(server_.size());
  if (src_rank >= 0 && src_rank < gpus && dst_rank >= 0 && dst_rank < gpus &&
      server_[static_cast<std::size_t>(src_rank)] != server_[static_cast<std::size_t>(dst_rank)]) {
    const GpuPaths& a = paths(src_rank);
    const GpuPaths& b = paths(dst_rank);
    middle_.clear();
    if (a.up && b.down && router_.switch_route_into(a.up->fabric_switch, b.down->fabric_switch, flow_key, middle_)) {
      ZX_CHECK(transfers_ < kMaxTransfers, "bundle builder: 2^47 transfers in one bundle");
      const std::uint64_t base = transfers_++ << kPositionBits;
      ++split_;
      sim::Duration latency = added_latency + a.up->latency + b.down->latency;
      for (topology::LinkId l : middle_) latency += latency_of_[topology::index(l)];
      latency_ = std::max(latency_, latency);
      size_ += size.count();
      if (size.count() == 0) return;
      const auto up = static_cast<std::uint64_t>(a.up->links.size());
      ZX_CHECK(up + middle_.size() + b.down->links.size() < (std::uint64_t{1} << kPositionBits),
               "bundle builder: a route of 65,536 links or more");
      add_side(out_, touched_out_, src_rank, size.count(), base);
      for (std::size_t i = 0; i < middle_.size(); ++i) {
        touch(topology::index(middle_[i]), size.count(), 1, base + up + i);
      }
      add_side(in_, touched_in_, dst_rank, size.count(), base + up + middle_.size());
      return;
    }
  }
  route_gpus(router_, src_rank, dst_rank, flow_key, scratch_);
  add_routed(scratch_.links, size, added_latency);
}

void BundleBuilder::add_routed(std::span<const std::uint32_t> links, sim::Bytes size, sim::Duration added_latency) {
  ZX_CHECK(links.size() < (std::size_t{1} << kPositionBits), "bundle builder: a route of 65,536 links or more");
  ZX_CHECK(transfers_ < kMaxTransfers, "bundle builder: 2^47 transfers in one bundle");
  const std::uint64_t base = transfers_++ << kPositionBits;
  ++whole_;
  sim::Duration latency = added_latency;
  for (std::uint32_t l : links) latency += latency_of_[l];
  latency_ = std::max(latency_, latency);
  size_ += size.count();
  if (size.count() == 0) return;
  for (std::size_t i = 0; i < links.size(); ++i) touch(links[i], size.count(), 1, base + i);
}

void BundleBuilder::flush() {
  for (int rank : touched_out_) {
    Sum& s = out_[static_cast<std::size_t>(rank)];
    const std::vector<std::uint32_t>& fixed = paths_[static_cast<std::size_t>(rank)]->up->links;
    for (std::size_t i = 0; i < fixed.size(); ++i) touch(fixed[i], s.bytes, s.count, s.first + i);
    s = Sum{};
  }
  for (int rank : touched_in_) {
    Sum& s = in_[static_cast<std::size_t>(rank)];
    const std::vector<std::uint32_t>& fixed = paths_[static_cast<std::size_t>(rank)]->down->links;
    for (std::size_t i = 0; i < fixed.size(); ++i) touch(fixed[i], s.bytes, s.count, s.first + i);
    s = Sum{};
  }
  touched_out_.clear();
  touched_in_.clear();
  // Each link's first touch is one (transfer, position): no two are equal.
  order_.clear();
  for (std::uint32_t l : touched_links_) order_.emplace_back(links_[l].first, l);
  std::sort(order_.begin(), order_.end());
  for (const auto& [first, l] : order_) {
    Sum& s = links_[l];
    share_.add_to_link(l, static_cast<double>(s.bytes), static_cast<double>(s.count));
    s = Sum{};
  }
  touched_links_.clear();
  share_.add_extent(sim::Bytes(size_), latency_);
  transfers_ = 0;
  size_ = 0;
  latency_ = sim::Duration::zero();
}

}  // namespace zx::models
