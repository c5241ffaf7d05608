// File: tests/flows_simgrid.cc
//
// The same flows on SimGrid: an independent max-min simulator to hold
// zionsim's flow model against, for finish times
// (//tests:simgrid_differential_test) and for speed
// (scripts/compare_simgrid.sh; issue 43, target 4). SimGrid 3.32 comes from
// Debian's libsimgrid-dev; only this test binary links it, zionsim does not.
//
//   flows_simgrid TOPOLOGY.json FLOWS.json [--cfg=...]
//
// TOPOLOGY.json is `zionsim topology --format json` for the cluster flags of
// the run, FLOWS.json is `zionsim flows --format json` of it: every flow with
// its route as link ids, its size and its start (docs/output_formats.md). Each link becomes a SimGrid
// link of zionsim's capacity (bandwidth x efficiency, rounded to the byte
// per second as topology/types.h does); each flow a Comm::sendto_async
// between its two GPUs' hosts over its own route. Prints "id,finish_ps" per
// flow, in input order, on standard output.
//
// Latency. SimGrid's CM02 model gives a flow whose route has latency L a
// share of a link in proportion to 1/L (TCP's round-trip unfairness: the
// variable's sharing penalty is its latency, network_cm02.cpp), where
// zionsim's is plain max-min: a flow waits its route's latency, then shares
// every link equally. So the links here have no latency, and each comm
// starts at its start plus the sum of its route's link latencies (from the
// topology file, computed here, not taken from zionsim's first_byte_ps).
// With no latency every SimGrid variable has penalty 1: plain max-min.
//
// SimGrid is configured for plain max-min sharing, the model zionsim's
// `--fidelity flow` implements (docs/network_model.md): the CM02 model
// (bandwidth and latency factors 1, no TCP window bound with TCP-gamma 0,
// no cross-traffic), and a time precision far below a picosecond, so that
// finishes are not merged (SimGrid's default `surf/precision` is 1e-5 s):
//   --cfg=network/model:CM02 --cfg=network/TCP-gamma:0
//   --cfg=network/crosstraffic:0 --cfg=surf/precision:1e-12
//   --cfg=maxmin/precision:1e-9
// (a `maxmin/precision` below 1e-9 makes SimGrid 3.32 crash on these
// capacities of 1e10 B/s and more, whose doubles are coarser than that).

#include <simgrid/s4u.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace sg4 = simgrid::s4u;

namespace {

struct Flow {
  std::int64_t id;
  int src;
  int dst;
  std::uint64_t size;
  double start_s;
  std::vector<int> route;
  double first_byte_s = 0;  // start_s + the route's latencies
};

nlohmann::json read_json(const char* path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string("cannot open ") + path);
  return nlohmann::json::parse(in);
}

}  // namespace

int main(int argc, char** argv) {
  sg4::Engine engine(&argc, argv);  // takes the --cfg=... arguments
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TOPOLOGY.json FLOWS.json [--cfg=...]\n", argv[0]);
    return 2;
  }
  const nlohmann::json topology = read_json(argv[1]);
  const nlohmann::json flows_doc = read_json(argv[2]);

  std::vector<Flow> flows;
  for (const nlohmann::json& f : flows_doc.at("flows")) {
    Flow flow{f.at("id").get<std::int64_t>(), f.at("src_rank").get<int>(), f.at("dst_rank").get<int>(),
              f.at("size_bytes").get<std::uint64_t>(), f.at("start_ps").get<double>() * 1e-12,
              f.at("route").get<std::vector<int>>()};
    if (flow.route.empty()) throw std::runtime_error("a flow without a route (a GPU to itself): not compared");
    flows.push_back(std::move(flow));
  }

  sg4::NetZone* zone = sg4::create_full_zone("cluster");
  std::map<int, sg4::Host*> hosts;
  const auto host = [&](int rank) {
    auto [it, added] = hosts.try_emplace(rank, nullptr);
    if (added) it->second = zone->create_host("gpu" + std::to_string(rank), 1e9);
    return it->second;
  };
  for (const Flow& f : flows) {
    host(f.src);
    host(f.dst);
  }
  std::unordered_map<int, sg4::Link*> links;
  std::unordered_map<int, double> latency_s;
  for (const nlohmann::json& l : topology.at("links")) {
    const int id = l.at("id").get<int>();
    // zionsim's capacity: the rated B/s (rounded) x efficiency (rounded).
    const double rated = std::round(l.at("bandwidth_gbyte_per_s").get<double>() * 1e9);
    const double capacity = std::round(rated * l.at("efficiency").get<double>());
    links[id] = zone->create_link("link" + std::to_string(id), capacity)->set_latency(0)->seal();
    latency_s[id] = l.at("latency_ns").get<double>() * 1e-9;
  }
  for (Flow& f : flows) {
    double latency = 0;
    for (int id : f.route) latency += latency_s.at(id);
    f.first_byte_s = f.start_s + latency;
  }
  // One route per (source, destination) pair, as zionsim's flows command
  // hashes a pair onto one path.
  std::map<std::pair<int, int>, std::vector<int>> routes;
  for (const Flow& f : flows) {
    auto [it, added] = routes.try_emplace({f.src, f.dst}, f.route);
    if (!added && it->second != f.route) throw std::runtime_error("two routes for one pair of GPUs");
  }
  for (const auto& [pair, route] : routes) {
    std::vector<sg4::LinkInRoute> hops;
    for (int id : route) hops.emplace_back(links.at(id));
    zone->add_route(hosts.at(pair.first)->get_netpoint(), hosts.at(pair.second)->get_netpoint(), nullptr, nullptr,
                    hops, /*symmetrical=*/false);
  }
  zone->seal();

  // Each comm's finish time as SimGrid's kernel recorded it (not when the
  // launcher, waiting on the comms in order, sees it end).
  std::vector<sg4::CommPtr> comms(flows.size());
  std::vector<std::size_t> order(flows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return flows[a].first_byte_s < flows[b].first_byte_s; });
  sg4::Actor::create("launcher", hosts.begin()->second, [&] {
    for (std::size_t i : order) {
      const Flow& f = flows[i];
      if (f.first_byte_s > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(f.first_byte_s);
      comms[i] = sg4::Comm::sendto_async(hosts.at(f.src), hosts.at(f.dst), f.size);
    }
    for (const sg4::CommPtr& c : comms) c->wait();
  });
  engine.run();

  std::printf("id,finish_ps\n");
  for (std::size_t i = 0; i < flows.size(); ++i) {
    std::printf("%lld,%lld\n", static_cast<long long>(flows[i].id),
                static_cast<long long>(std::llround(comms[i]->get_finish_time() * 1e12)));
  }
  return 0;
}
