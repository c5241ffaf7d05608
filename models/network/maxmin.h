// File: models/network/maxmin.h
//
// The max-min fair bandwidth-sharing solver, standalone: given link
// capacities and which links each flow crosses, it returns every flow's rate.
//
// The problem. Links l have capacities C_l > 0 (bytes per second). Flow f
// crosses the links of its route, has a weight w_f > 0 and optionally a rate
// cap c_f. A rate vector r is feasible when, on every link, the sum of the
// rates of the flows crossing it is at most C_l, and r_f <= c_f. It is max-min
// fair (weighted) when no flow's normalised rate r_f / w_f can grow without
// lowering the normalised rate of a flow whose normalised rate is equal or
// smaller. Equivalently, every flow has a bottleneck: a link it crosses that
// is saturated and on which no flow has a larger normalised rate, or its cap.
//
// The algorithm: progressive filling (water filling; Bertsekas and
// Gallager, "Data Networks", 6.5.2). All flows grow at the same normalised
// speed; when a link fills, the flows crossing it freeze at the link's fair
// share (remaining capacity / remaining weight); when a flow reaches its cap
// it freezes there. Links are processed in increasing order of their current
// fair share from an indexed heap (one entry per link, its key updated in
// place when its share changes; a lazily invalidated heap keeps every stale
// entry until it surfaces, and on an all-to-all grew far beyond L), and caps
// from a sorted list, so the cost is O((L + I) log L) for L links and I
// flow-link incidences.
//
// Determinism and exactness. Ties between equal shares are broken by link id
// (caps after links with the same share, by flow id); flows on a link are
// frozen in increasing flow id. Each link's arithmetic involves only the flows
// that cross it, so solving one connected component of a larger problem gives
// bit-for-bit the rates that solving the whole problem would, as long as the
// component's links and flows are numbered in the same relative order. The
// incremental network model relies on this.
//
// Equal shares are equal bits. In exact arithmetic, flows frozen at one level
// leave a link whose share was that level at that same level; in floating
// point it drifts by a few ulps, which would scatter a symmetric system's
// rates (an all-to-all's flows would finish at thousands of distinct
// picoseconds). So a link folds each group of flows frozen at one level into
// its remaining capacity with one multiplication, and a link whose share
// falls to within kLevelTolerance (1e-10, relative) of the current level,
// or below it (shares only grow during filling), freezes at that level in the
// same step: its flows get exactly the level x their weight. The tolerance
// is a numerical precision, five orders below what a test can observe, not a
// modelling choice. Every decision still involves only one component's links
// and flows, so component exactness holds.
//
// Links that carry the same flows are one constraint. Two links whose
// columns are identical (the same flows, in the same order, so the same
// weight sums) and that start from the same open group (level and level
// weight) go through the same freezes; their remaining capacities differ
// only through their bases. When one base is clearly the smaller (by more
// than 2^-16 of the other, far beyond what the folds' roundings can
// close), the other link's share stays above the first's by more than the
// level tolerance at every step: it is never popped with a flow unfrozen,
// never snaps, and freezes nothing; the first link's freeze leaves it
// empty. So the solver drops such links before filling: the same rates,
// levels and freeze order, bit for bit, with fewer links in the heap and
// fewer incidences per freeze. (Links of one column with equal or nearly
// equal bases all stay: which of them freezes the column first can decide
// the order of freezes within a level.) A GPU's way out to the fabric, its
// PCIe hops and its NIC's uplink, carries exactly its flows that leave the
// server, and the NIC's uplink is the slowest, so the PCIe hops are dropped.
//
// Re-solving from a known level (solve_with_fixed). When flows only leave a
// problem, every remaining flow whose level (rate / weight) was below the
// smallest level λ of the leavers keeps its rate exactly, and the others get
// the max-min solution of themselves alone on the capacity the fixed flows
// leave (progressive filling of the new problem repeats the old one below λ).
// The caller passes every flow either free or fixed at its level; the solver
// rebuilds each link's state by replaying the fixed flows' freezes as a
// from-scratch solve performs them (ascending level, one group per link per
// level, folded with one multiplication) and then fills the free flows as
// solve() does, so the free flows get the bits a from-scratch solve of the
// whole problem would give them. The replay groups the flows of one level on
// a link in flow order, where a from-scratch solve adds them in the order the
// steps freeze them; the sums agree exactly only when every weight is an
// integer (and the total is below 2^53), which solve_with_fixed requires.
// With other weights callers re-solve from scratch.
//
// Re-solving from per-link states (solve_with_fixed_links). The replay's
// outcome on a link depends only on that link's fixed flows, through the
// ascending list of their distinct levels L_1 < ... < L_k with the weight W_i
// frozen at each: the remaining capacity is C - L_1 W_1 - ... - L_{k-1} W_{k-1}
// (subtracted in that order, each product rounded once) and the last group
// (L_k, W_k) stays open, exactly as FixedLinkState and fold_step describe. A
// caller that keeps those lists per link (the network model does, so that a
// re-solve costs the free flows and not the fixed flows sharing their links)
// passes the states instead of the fixed flows; the free flows then get the
// same bits as with solve_with_fixed.

#ifndef ZIONSIM_MODELS_NETWORK_MAXMIN_H_
#define ZIONSIM_MODELS_NETWORK_MAXMIN_H_

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace zx::models {

/// A max-min problem in compressed form. Flow f crosses
/// links[link_offsets[f] .. link_offsets[f+1]).
struct MaxMinProblem {
  std::vector<double> capacity;              ///< per link, bytes per second, > 0
  std::vector<std::uint32_t> link_offsets;   ///< size num_flows + 1, starts at 0
  std::vector<std::uint32_t> links;          ///< link indices, per flow in route order
  std::vector<double> weight;                ///< per flow, > 0; empty means all 1
  std::vector<double> cap;                   ///< per flow, > 0 or +inf; empty means none

  std::size_t num_flows() const { return link_offsets.empty() ? 0 : link_offsets.size() - 1; }
  std::size_t num_links() const { return capacity.size(); }
  /// Appends a flow; returns its index.
  std::uint32_t add_flow(std::span<const std::uint32_t> route, double flow_weight = 1.0,
                         double rate_cap = std::numeric_limits<double>::infinity());
};

/// A link as the free flows find it once the fixed flows on it have frozen
/// (see the header comment): `base` is the capacity less every fixed group
/// but the last, (`level`, `level_weight`) the last group, still open. A link
/// without fixed flows: {capacity, 0, 0}.
struct FixedLinkState {
  double base;
  double level;
  double level_weight;
};

/// One step of the fold: the remaining capacity once the group frozen at
/// `level` with total weight `weight` is closed, from `base` before it.
inline double fold_step(double base, double level, double weight) { return base - level * weight; }

/// Solves max-min problems, reusing its scratch memory between calls.
class MaxMinSolver {
 public:
  /// What the solver may do to speed a solve up without changing its bits.
  struct Options {
    /// Solve each set of links with identical columns as its tightest link
    /// (see the header comment). Off only to test that it changes nothing.
    bool merge_identical_links = true;
  };
  MaxMinSolver() = default;
  explicit MaxMinSolver(Options options) : options_(options) {}

  /// Links the latest solve dropped as another's identical column.
  std::size_t merged_links() const { return merged_links_; }

  /// Returns the max-min fair rate of every flow (bytes per second). A flow
  /// that crosses no link and has no cap gets +inf. Throws
  /// std::invalid_argument for malformed problems (bad offsets, link index
  /// out of range, non-positive capacity, weight or cap).
  const std::vector<double>& solve(const MaxMinProblem& problem);

  /// Marks a flow as free in solve_with_fixed's `fixed_level`.
  static constexpr double kFree = std::numeric_limits<double>::quiet_NaN();

  /// Solves with some flows fixed: fixed_level[f] is kFree (NaN) or the
  /// normalised level (rate / weight, or cap / weight for a flow held at its
  /// cap) at which flow f froze in a from-scratch solve, every such level
  /// below the level of every free flow. Returns the rates of the free flows
  /// as a from-scratch solve of the same problem would (bit for bit); a fixed
  /// flow's entry is its rate at its level (its cap when the level is
  /// cap / weight, else level x weight). A fixed flow need only list the
  /// links it shares with free flows. Throws std::invalid_argument as
  /// solve() does, for a fixed_level of the wrong size or a negative or
  /// non-finite fixed level, and for weights that are not all integers summing
  /// below 2^53 when any flow is fixed (see the header comment).
  const std::vector<double>& solve_with_fixed(const MaxMinProblem& problem,
                                              std::span<const double> fixed_level);

  /// Solves the free flows of a re-solve from a known level given, for each
  /// link of `problem`, its state after its fixed flows froze (so `problem`
  /// lists only the free flows). Returns the rates a from-scratch solve of
  /// the whole problem gives the free flows, bit for bit, when the states are
  /// the folds of the fixed flows' levels below every free flow's level.
  /// Throws std::invalid_argument as solve() does, for a `fixed_links` of the
  /// wrong size, a non-finite state, a negative level or level weight, a
  /// level weight that is not an integer, and for weights that are not all
  /// integers summing below 2^53.
  const std::vector<double>& solve_with_fixed_links(const MaxMinProblem& problem,
                                                    std::span<const FixedLinkState> fixed_links);

  /// The normalised level of every flow in the latest solve: rate / weight
  /// as the solver froze it (cap / weight for a flow held at its cap; +inf
  /// for a flow with no link and no cap).
  const std::vector<double>& levels() const { return levels_; }

  /// The flows of the latest solve in the order it froze them (the replayed
  /// fixed flows first, then the free ones), each once; flows that crossed no
  /// link and had no cap are not in it. Progressive filling freezes at
  /// non-decreasing levels, so this lists the flows by level.
  const std::vector<std::uint32_t>& freeze_order() const { return freeze_order_; }

 private:
  const std::vector<double>& run(const MaxMinProblem& problem, std::span<const double> fixed_level,
                                 std::span<const FixedLinkState> fixed_links);

  struct HeapEntry {
    double share;
    std::uint32_t id;  // link index, or num_links + flow index for a cap
    bool operator>(const HeapEntry& o) const {
      return share != o.share ? share > o.share : id > o.id;
    }
  };

  /// Relative rounding noise below which a link's share counts as equal to
  /// the current level (see solve()); far below any modelled effect.
  static constexpr double kLevelTolerance = 1e-10;

  // The indexed heap of links (heap_, heap_pos_).
  static constexpr std::uint32_t kNotInHeap = std::numeric_limits<std::uint32_t>::max();
  // The stages of run(), in order.
  void build_links(const MaxMinProblem& p, std::span<const FixedLinkState> fixed_links);
  void merge_identical_links(const MaxMinProblem& p);
  void replay_fixed(const MaxMinProblem& p, std::span<const double> fixed_level);
  void build_queues(const MaxMinProblem& p);
  void fill(const MaxMinProblem& p);
  // What they share.
  double share_of(std::uint32_t l) const;
  void freeze(const MaxMinProblem& p, std::size_t f, double level);
  void freeze_link(const MaxMinProblem& p, std::uint32_t l, double level);
  void end_step(const MaxMinProblem& p, double level);
  void place_at(std::size_t i, const HeapEntry& e);
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  void update_key(std::uint32_t l, double share);
  void pop_heap_front();

  Options options_;
  std::size_t merged_links_ = 0;
  // The incidences freeze() walks: the problem's own (link_offsets, links),
  // or, when links were merged, kept_offsets_ and kept_links_ (the kept
  // links of each flow, in route order).
  const std::uint32_t* flow_offsets_ = nullptr;
  const std::uint32_t* flow_links_ = nullptr;
  std::vector<std::uint32_t> kept_offsets_;
  std::vector<std::uint32_t> kept_links_;
  std::vector<std::uint8_t> dropped_;  // per link: merged into another
  // merge_identical_links's open-addressing table: link + 1 (0: empty).
  std::vector<std::uint32_t> column_table_;
  std::vector<std::uint64_t> column_hash_;
  std::vector<std::uint32_t> column_of_;  // per link: the first link of its column
  std::vector<double> min_base_;          // per column's first link: the smallest base
  /// How much larger than its column's smallest base a link's base must be
  /// to be dropped (relative to its own): 2^-16, against fold roundings of
  /// at most 2^-21 of the base for up to 2^31 flows and kLevelTolerance.
  static constexpr double kMergeGap = 0x1p-16;

  std::vector<double> rates_;
  std::vector<double> levels_;
  std::vector<std::uint32_t> freeze_order_;
  // Per link, together: freeze() touches all of it for every link of a flow.
  struct LinkState {
    double base;             // capacity less the folded frozen groups
    double level;            // level of the link's latest frozen group
    double level_weight;     // weight frozen at level
    double weight_sum;       // weight of the unfrozen flows
    std::uint32_t unfrozen;  // unfrozen flows
    std::uint32_t dirty;     // queued in dirty_ this step
  };
  std::vector<LinkState> link_;
  // The fixed flows keyed by their level's bit pattern (for levels >= 0 it
  // orders as the level does), sorted by sort_fixed_flows().
  struct FixedFlow {
    std::uint64_t key;
    std::uint32_t flow;
  };
  void sort_fixed_flows();
  bool sort_fixed_flows_by_level_class();
  std::vector<FixedFlow> fixed_order_;
  std::vector<FixedFlow> fixed_scratch_;
  // Level classes (distinct levels) of the fixed flows: an open-addressing
  // table from key to class, valid where its stamp is class_stamp_.
  struct ClassSlot {
    std::uint64_t key;
    std::uint32_t stamp;
    std::uint32_t id;
  };
  std::vector<ClassSlot> class_table_;
  std::uint32_t class_stamp_ = 0;
  std::vector<std::uint64_t> class_keys_;
  std::vector<std::uint32_t> class_start_;  // by class: its first place in the sorted order
  std::vector<std::uint32_t> class_order_;
  std::vector<std::uint32_t> flow_class_;
  std::vector<std::uint32_t> at_cap_;  // flows frozen at their cap
  std::vector<std::uint32_t> cursor_;
  std::vector<std::uint32_t> link_flow_offsets_;
  std::vector<std::uint32_t> link_flows_;
  std::vector<std::uint8_t> frozen_;
  std::vector<std::uint32_t> dirty_;
  std::vector<HeapEntry> heap_;          // links, a min-heap by (share, id)
  std::vector<std::uint32_t> heap_pos_;  // per link: index in heap_, or kNotInHeap
  std::vector<HeapEntry> caps_;          // flows' caps, increasing (share, id)
};

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_NETWORK_MAXMIN_H_
