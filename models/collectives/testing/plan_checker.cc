// File: models/collectives/testing/plan_checker.cc
//
// The symbolic plan checker (see plan_checker.h).

#include "models/collectives/testing/plan_checker.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

namespace zx::models::collectives::testing {
namespace {

constexpr std::size_t kMaxErrors = 20;

/// A fixed-width set of small integers (ranks, or steps).
class BitSet {
 public:
  explicit BitSet(std::size_t bits = 0) : words_((bits + 63) / 64, 0) {}
  void set(std::size_t i) { words_[i / 64] |= std::uint64_t{1} << (i % 64); }
  bool test(std::size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  bool empty() const {
    return std::all_of(words_.begin(), words_.end(), [](std::uint64_t w) { return w == 0; });
  }
  bool intersects(const BitSet& o) const {
    for (std::size_t i = 0; i < words_.size(); ++i) {
      if (words_[i] & o.words_[i]) return true;
    }
    return false;
  }
  void unite(const BitSet& o) {
    for (std::size_t i = 0; i < words_.size(); ++i) words_[i] |= o.words_[i];
  }
  bool operator==(const BitSet&) const = default;
  std::string to_string() const {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < words_.size() * 64; ++i) {
      if (test(i)) members.push_back(i);
    }
    return fmt::format("{{{}}}", fmt::join(members, ","));
  }

 private:
  std::vector<std::uint64_t> words_;
};

class Checker {
 public:
  Checker(const CollectivePlan& plan, const CollectiveRequest& request, bool replay)
      : plan_(plan), request_(request), n_(static_cast<int>(request.ranks.size())), replay_(replay) {}

  PlanReport run() {
    report_.bytes_sent.assign(static_cast<std::size_t>(std::max(n_, 0)), sim::Bytes(0));
    report_.bytes_received = report_.bytes_sent;
    report_.num_steps = plan_.steps.size();
    if (plan_.kind != request_.kind) {
      error(fmt::format("plan is for {}, request is {}", to_string(plan_.kind),
                        to_string(request_.kind)));
    }
    if (plan_.group_size != n_) {
      error(fmt::format("plan is for {} ranks, request has {}", plan_.group_size, n_));
    }
    if (!report_.ok()) return report_;
    if (check_structure() && check_chunk_table() && replay_) {
      replay();
      report_.replayed = true;
    }
    return std::move(report_);
  }

 private:
  void error(std::string message) {
    if (report_.errors.size() < kMaxErrors) report_.errors.push_back(std::move(message));
  }

  bool check_structure() {
    const std::size_t before = report_.errors.size();
    std::vector<std::size_t> depth(plan_.steps.size(), 0);
    for (std::size_t s = 0; s < plan_.steps.size(); ++s) {
      const Step& step = plan_.steps[s];
      std::size_t d = 0;
      for (std::uint32_t a : step.after) {
        if (a >= s) {
          error(fmt::format("step {}: follows step {}, which is not earlier", s, a));
          continue;
        }
        d = std::max(d, depth[a]);
      }
      depth[s] = d + 1;
      report_.critical_path_steps = std::max(report_.critical_path_steps, depth[s]);
      std::map<int, sim::Bytes> expected_work;
      for (std::size_t t = 0; t < step.transfers.size(); ++t) {
        const Transfer& x = step.transfers[t];
        ++report_.num_transfers;
        const std::string where = fmt::format("step {} transfer {}", s, t);
        const auto endpoint = [&](int e) { return (e >= 0 && e < n_) || e == kNvlinkSwitch; };
        if (!endpoint(x.src) || !endpoint(x.dst) || x.src == x.dst) {
          error(fmt::format("{}: bad endpoints {} -> {}", where, x.src, x.dst));
          continue;
        }
        if (x.src == kNvlinkSwitch && x.op == TransferOp::kReduce) {
          error(fmt::format("{}: the NVLink switch delivers copies; a GPU does not reduce what it sends", where));
        }
        if (x.relay && (*x.relay < 0 || *x.relay >= n_ || *x.relay == x.src || *x.relay == x.dst ||
                        x.src == kNvlinkSwitch || x.dst == kNvlinkSwitch)) {
          error(fmt::format("{}: bad relay {} for {} -> {} (a member other than both ends, between GPUs)", where,
                            *x.relay, x.src, x.dst));
        }
        sim::Bytes size;
        bool in_bounds = true;
        for (const ChunkRange& r : x.chunks) {
          if (r.begin > r.end || r.end > plan_.chunks.size()) {
            error(fmt::format("{}: chunk range [{}, {}) out of bounds", where, r.begin, r.end));
            in_bounds = false;
            continue;
          }
          for (std::uint32_t c = r.begin; c < r.end; ++c) size += plan_.chunks[c].size;
        }
        if (in_bounds && size != x.size) {
          error(fmt::format("{}: size {} but its chunks hold {} bytes", where, x.size.count(),
                            size.count()));
        }
        if (x.src != kNvlinkSwitch) report_.bytes_sent[static_cast<std::size_t>(x.src)] += x.size;
        if (x.dst != kNvlinkSwitch) report_.bytes_received[static_cast<std::size_t>(x.dst)] += x.size;
        report_.total_bytes += x.size;
        // The switch reduces in the network: no rank's local work.
        if (x.op == TransferOp::kReduce && x.dst != kNvlinkSwitch) expected_work[x.dst] += x.size;
      }
      std::map<int, sim::Bytes> work;
      for (const LocalWork& w : step.local_work) {
        work[w.rank] += w.reduce_bytes;
        report_.total_reduce_bytes += w.reduce_bytes;
      }
      if (work != expected_work) {
        error(fmt::format("step {}: local work does not match its reducing transfers", s));
      }
    }
    return report_.errors.size() == before;
  }

  bool check_chunk_table() {
    const std::size_t before = report_.errors.size();
    const CollectiveKind kind = request_.kind;
    const bool rooted = kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce;
    sim::Bytes total;
    std::map<int, sim::Bytes> per_origin, per_destination;
    std::map<std::pair<int, int>, sim::Bytes> per_pair;
    for (std::size_t c = 0; c < plan_.chunks.size(); ++c) {
      const Chunk& chunk = plan_.chunks[c];
      const bool has_origin = chunk.origin.has_value();
      const bool has_destination = chunk.destination.has_value();
      const bool want_origin = kind == CollectiveKind::kAllGather ||
                               kind == CollectiveKind::kAllToAll ||
                               kind == CollectiveKind::kBroadcast;
      const bool want_destination = kind == CollectiveKind::kReduceScatter ||
                                    kind == CollectiveKind::kAllToAll ||
                                    kind == CollectiveKind::kReduce;
      if (has_origin != want_origin || has_destination != want_destination) {
        error(fmt::format("chunk {}: origin/destination pattern does not fit {}", c,
                          to_string(kind)));
        continue;
      }
      for (const auto& end : {chunk.origin, chunk.destination}) {
        if (end && (*end < 0 || *end >= n_))
          error(fmt::format("chunk {}: rank {} out of range", c, *end));
      }
      if (rooted && (chunk.origin.value_or(request_.root) != request_.root ||
                     chunk.destination.value_or(request_.root) != request_.root)) {
        error(fmt::format("chunk {}: must start or end at the root {}", c, request_.root));
      }
      total += chunk.size;
      if (has_origin) per_origin[*chunk.origin] += chunk.size;
      if (has_destination) per_destination[*chunk.destination] += chunk.size;
      if (has_origin && has_destination)
        per_pair[{*chunk.origin, *chunk.destination}] += chunk.size;
    }
    if (report_.errors.size() != before) return false;
    switch (kind) {
      case CollectiveKind::kAllReduce:
      case CollectiveKind::kBroadcast:
      case CollectiveKind::kReduce:
        if (total != request_.bytes_per_rank) {
          error(fmt::format("chunks hold {} bytes, the buffer is {}", total.count(),
                            request_.bytes_per_rank.count()));
        }
        break;
      case CollectiveKind::kReduceScatter:
      case CollectiveKind::kAllGather: {
        const auto blocks = block_sizes(request_);
        const auto& per_rank = kind == CollectiveKind::kAllGather ? per_origin : per_destination;
        for (int r = 0; r < n_; ++r) {
          const auto it = per_rank.find(r);
          const sim::Bytes got = it == per_rank.end() ? sim::Bytes(0) : it->second;
          if (got != blocks[static_cast<std::size_t>(r)]) {
            error(fmt::format("rank {}'s block: chunks hold {} bytes, expected {}", r, got.count(),
                              blocks[static_cast<std::size_t>(r)].count()));
          }
        }
        break;
      }
      case CollectiveKind::kAllToAll:
        for (int s = 0; s < n_; ++s) {
          for (int d = 0; d < n_; ++d) {
            const auto it = per_pair.find({s, d});
            const sim::Bytes got = it == per_pair.end() ? sim::Bytes(0) : it->second;
            if (got != pair_size(request_, s, d)) {
              error(fmt::format("pair {} -> {}: chunks hold {} bytes, expected {}", s, d,
                                got.count(), pair_size(request_, s, d).count()));
            }
          }
        }
        break;
    }
    return report_.errors.size() == before;
  }

  // The NVLink switch's values are a virtual rank n's.
  std::size_t cell(int rank, std::uint32_t chunk) const {
    const int row = rank == kNvlinkSwitch ? n_ : rank;
    return static_cast<std::size_t>(row) * plan_.chunks.size() + chunk;
  }
  std::string endpoint_name(int rank) const {
    return rank == kNvlinkSwitch || rank == n_ ? std::string("the NVLink switch") : fmt::format("rank {}", rank);
  }

  void replay() {
    const std::size_t num_chunks = plan_.chunks.size();
    const std::size_t ranks = static_cast<std::size_t>(n_);
    std::vector<BitSet> value((ranks + 1) * num_chunks, BitSet(ranks));  // + the switch, empty
    for (std::uint32_t c = 0; c < num_chunks; ++c) {
      const Chunk& chunk = plan_.chunks[c];
      if (chunk.origin) {
        value[cell(*chunk.origin, c)].set(static_cast<std::size_t>(*chunk.origin));
      } else {
        for (int r = 0; r < n_; ++r) value[cell(r, c)].set(static_cast<std::size_t>(r));
      }
    }
    // ancestors[s]: every step that finishes before s starts.
    const std::size_t num_steps = plan_.steps.size();
    std::vector<BitSet> ancestors(num_steps, BitSet(num_steps));
    // Accesses since the last copy into each (rank, chunk). Reductions
    // commute, so unordered reductions into one cell are fine; every other
    // pair of accesses where one writes must be ordered by dependencies.
    struct History {
      std::optional<std::uint32_t> last_copy;
      std::vector<std::uint32_t> reducers;
      std::vector<std::uint32_t> readers;
    };
    std::map<std::size_t, History> history;
    const auto describe_cell = [&](std::size_t c) {
      return fmt::format("{}'s chunk {}", endpoint_name(static_cast<int>(c / num_chunks)), c % num_chunks);
    };
    // Reports every access in `earlier` that step s does not follow.
    const auto require_ordered = [&](std::uint32_t s, const std::vector<std::uint32_t>& earlier,
                                     std::size_t c, std::string_view what) {
      for (std::uint32_t e : earlier) {
        if (e != s && !ancestors[s].test(e)) {
          error(fmt::format("step {}: {} {} races with step {}", s, what, describe_cell(c), e));
          return;
        }
      }
    };
    for (std::uint32_t s = 0; s < num_steps; ++s) {
      const Step& step = plan_.steps[s];
      for (std::uint32_t a : step.after) {
        ancestors[s].unite(ancestors[a]);
        ancestors[s].set(a);
      }
      // Reads: every payload is taken at the start of the step.
      struct Delivery {
        std::size_t cell;
        TransferOp op;
        BitSet payload;
      };
      std::vector<Delivery> deliveries;
      std::map<std::size_t, bool> read_here;
      for (const Transfer& x : step.transfers) {
        for (const ChunkRange& r : x.chunks) {
          for (std::uint32_t c = r.begin; c < r.end; ++c) {
            if (plan_.chunks[c].size == sim::Bytes(0)) continue;
            const std::size_t from = cell(x.src, c);
            if (value[from].empty()) {
              error(fmt::format("step {}: {} sends chunk {} to {} but does not hold it", s, endpoint_name(x.src), c,
                                endpoint_name(x.dst)));
            }
            History& h = history[from];
            if (h.last_copy) require_ordered(s, {*h.last_copy}, from, "reading");
            require_ordered(s, h.reducers, from, "reading");
            h.readers.push_back(s);
            read_here[from] = true;
            deliveries.push_back({cell(x.dst, c), x.op, value[from]});
          }
        }
      }
      // Writes.
      std::map<std::size_t, std::pair<int, int>> writes_here;  // (copies, reductions)
      for (const Delivery& d : deliveries) {
        const auto chunk = static_cast<std::uint32_t>(d.cell % num_chunks);
        const int rank = static_cast<int>(d.cell / num_chunks);
        if (read_here.contains(d.cell)) {
          error(fmt::format("step {}: {} is both sent and received", s, describe_cell(d.cell)));
        }
        auto& [copies, reductions] = writes_here[d.cell];
        (d.op == TransferOp::kCopy ? copies : reductions) += 1;
        if (copies > 1 || (copies > 0 && reductions > 0)) {
          error(fmt::format("step {}: {} is written twice, not only by reductions", s,
                            describe_cell(d.cell)));
        }
        History& h = history[d.cell];
        if (h.last_copy && *h.last_copy != s) require_ordered(s, {*h.last_copy}, d.cell, "writing");
        require_ordered(s, h.readers, d.cell, "writing");
        if (d.op == TransferOp::kCopy) {
          require_ordered(s, h.reducers, d.cell, "copying into");
          value[d.cell] = d.payload;
          h = History{.last_copy = s};
        } else {
          if (value[d.cell].intersects(d.payload)) {
            error(
                fmt::format("step {}: {} reduces chunk {} holding {} with {}: a contribution "
                            "counted twice",
                            s, endpoint_name(rank), chunk, value[d.cell].to_string(), d.payload.to_string()));
          }
          value[d.cell].unite(d.payload);
          h.reducers.push_back(s);
        }
      }
    }
    // The end.
    BitSet everyone(ranks);
    for (std::size_t r = 0; r < ranks; ++r) everyone.set(r);
    for (std::uint32_t c = 0; c < num_chunks; ++c) {
      const Chunk& chunk = plan_.chunks[c];
      if (chunk.size == sim::Bytes(0)) continue;
      BitSet expected(ranks);
      if (chunk.origin) {
        expected.set(static_cast<std::size_t>(*chunk.origin));
      } else {
        expected = everyone;
      }
      for (int r = 0; r < n_; ++r) {
        if (chunk.destination && *chunk.destination != r) continue;
        if (value[cell(r, c)] != expected) {
          error(fmt::format("rank {} ends with chunk {} = {}, expected {}", r, c,
                            value[cell(r, c)].to_string(), expected.to_string()));
        }
      }
    }
  }

  const CollectivePlan& plan_;
  const CollectiveRequest& request_;
  int n_;
  bool replay_;
  PlanReport report_;
};

}  // namespace

std::string PlanReport::summary() const {
  if (ok()) return "ok";
  return fmt::format("{}", fmt::join(errors, "\n"));
}

namespace {

// A generated plan's answers against its steps made and held: the
// dependents, roots and counts the executor runs it by must be the ones
// the steps' `after` lists say.
void check_generator(const StepGenerator& generator, const CollectivePlan& held, PlanReport& report) {
  const auto count = static_cast<std::uint32_t>(held.steps.size());
  std::vector<std::vector<std::uint32_t>> dependents(count);
  std::vector<std::uint32_t> roots;
  bool moves = false;
  for (std::uint32_t s = 0; s < count; ++s) {
    const Step& step = held.steps[s];
    for (std::uint32_t a : step.after) {
      if (a < s) dependents[a].push_back(s);
    }
    if (step.after.empty()) roots.push_back(s);
    for (const Transfer& x : step.transfers) moves |= x.size.count() > 0;
    for (const LocalWork& w : step.local_work) moves |= w.reduce_bytes.count() > 0;
    if (generator.after_count(s) != step.after.size()) {
      report.errors.push_back(fmt::format("generated step {}: after_count {} but {} steps in its after list", s,
                                          generator.after_count(s), step.after.size()));
    }
  }
  for (std::uint32_t s = 0; s < count; ++s) {
    std::array<std::uint32_t, kMaxGeneratedDependents> out;
    const std::size_t k = generator.dependents(s, out);
    if (!std::equal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k), dependents[s].begin(),
                    dependents[s].end())) {
      report.errors.push_back(fmt::format("generated step {}: dependents [{}], its successors' after lists say [{}]",
                                          s, fmt::join(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k), ","),
                                          fmt::join(dependents[s], ",")));
    }
  }
  if (generator.roots() != roots) {
    report.errors.push_back(fmt::format("generated plan: roots [{}], steps after none [{}]",
                                        fmt::join(generator.roots(), ","), fmt::join(roots, ",")));
  }
  if (generator.moves_bytes() != moves) {
    report.errors.push_back(fmt::format("generated plan: moves_bytes {} but its steps {}", generator.moves_bytes(),
                                        moves ? "move bytes" : "move none"));
  }
}

PlanReport check_held_or_generated(const CollectivePlan& plan, const CollectiveRequest& request,
                                   std::size_t max_replay_bytes) {
  if (!plan.generator) return Checker(plan, request, replay_bytes(plan) <= max_replay_bytes).run();
  const CollectivePlan held = materialize(plan);
  PlanReport report = Checker(held, request, replay_bytes(held) <= max_replay_bytes).run();
  check_generator(*plan.generator, held, report);
  return report;
}

}  // namespace

PlanReport check_plan(const CollectivePlan& plan, const CollectiveRequest& request) {
  return check_held_or_generated(plan, request, std::numeric_limits<std::size_t>::max());
}

PlanReport check_plan(const CollectivePlan& plan, const CollectiveRequest& request,
                      std::size_t max_replay_bytes) {
  return check_held_or_generated(plan, request, max_replay_bytes);
}

std::size_t replay_bytes(const CollectivePlan& plan) {
  // A BitSet of n bits is ceil(n / 64) words plus its vector's header.
  const auto set_bytes = [](std::size_t bits) { return (bits + 63) / 64 * 8 + 24; };
  const auto ranks = static_cast<std::size_t>(std::max(plan.group_size, 0));
  const auto steps = static_cast<std::size_t>(step_count(plan));
  return (ranks + 1) * plan.chunks.size() * set_bytes(ranks) + steps * set_bytes(steps);  // + the switch
}

}  // namespace zx::models::collectives::testing
