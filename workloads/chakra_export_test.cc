// The Chakra exporter: a graph with every kind of op, exported, written as
// .et files and imported back, is the same graph op for op; what Chakra
// cannot say is refused with a clear error; the schema's own fields carry
// what Chakra's tools read (types, sizes, microseconds, stream order).

#include "workloads/chakra_export.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "workloads/chakra_import.h"

namespace zx::workloads {
namespace {

namespace mc = models::collectives;

models::OpGraph every_kind_of_op() {
  models::OpGraph g;
  g.num_ranks = 3;
  const int compute = g.stream("compute");
  const int comm = g.stream("comm");
  const int side = g.stream("side");
  // An all-to-all-v in group order 2, 0, 1 with a root and an algorithm;
  // an all-reduce of ranks 0 and 2; a transfer 1 -> 2.
  g.collectives.push_back(models::CollectiveCall{.kind = mc::CollectiveKind::kAllToAll,
                                                 .ranks = {2, 0, 1},
                                                 .bytes_per_rank = sim::Bytes(0),
                                                 .all_to_all_v_bytes = {{0, 10, 20}, {30, 0, 40}, {50, 60, 0}},
                                                 .dtype = mc::DataType::kFp16,
                                                 .algorithm = "nccl_p2p",
                                                 .root = 1});
  g.collectives.push_back(
      models::CollectiveCall{.kind = mc::CollectiveKind::kAllReduce, .ranks = {0, 2}, .bytes_per_rank = sim::Bytes(1 << 20)});
  g.transfers.push_back(models::TransferCall{.src = 1, .dst = 2, .size = sim::Bytes(4096)});
  for (int r = 0; r < 3; ++r) {
    const std::uint32_t fwd = g.add(models::Op{.kind = models::OpKind::kCompute,
                                               .rank = r,
                                               .stream = compute,
                                               .name = "fwd",
                                               .category = "compute",
                                               .duration = sim::Duration::ps(1'234'567 + r)});
    const std::uint32_t copy = g.add(models::Op{.kind = models::OpKind::kHostCopy,
                                                .rank = r,
                                                .stream = side,
                                                .name = "h2d",
                                                .category = "input",
                                                .bytes = sim::Bytes(1000 + r),
                                                .to_device = r != 1});
    const std::uint32_t a2a = g.add(models::Op{.kind = models::OpKind::kCollective,
                                               .rank = r,
                                               .stream = comm,
                                               .name = "a2a",
                                               .category = "all_to_all",
                                               .collective = 0,
                                               .deps = {fwd, copy}});
    std::uint32_t last = a2a;
    if (r != 1) {
      last = g.add(models::Op{.kind = models::OpKind::kCollective,
                              .rank = r,
                              .stream = comm,
                              .name = "ar",
                              .category = "all_reduce",
                              .collective = 1});
    }
    if (r != 0) {
      last = g.add(models::Op{.kind = r == 1 ? models::OpKind::kSend : models::OpKind::kRecv,
                              .rank = r,
                              .stream = g.stream(r == 1 ? "send" : "recv"),
                              .name = "p2p",
                              .category = "p2p",
                              .transfer = 0,
                              .deps = {last}});
    }
    g.add(models::Op{.kind = models::OpKind::kDelay,
                     .rank = r,
                     .stream = side,
                     .name = "wait",
                     .category = "host",
                     .duration = sim::Duration::ns(700),
                     .deps = {last}});
  }
  return g;
}

std::vector<std::string> write_files(const std::vector<chakra_et::File>& files, const std::string& stem) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::vector<std::string> paths;
  for (std::size_t r = 0; r < files.size(); ++r) {
    paths.push_back((std::filesystem::path(dir != nullptr ? dir : "/tmp") / fmt::format("{}.{}.et", stem, r)).string());
    std::ofstream out(paths.back(), std::ios::binary);
    out << chakra_et::encode(files[r]);
  }
  return paths;
}

TEST(ChakraExportTest, TheRoundTripGivesTheSameGraph) {
  const models::OpGraph g = every_kind_of_op();
  ASSERT_TRUE(models::validate(g).empty());
  const models::OpGraph back = import_chakra(write_files(export_chakra(g), "round_trip"));
  ASSERT_EQ(back.ops.size(), g.ops.size());
  EXPECT_EQ(back.num_ranks, 3);
  EXPECT_EQ(back.compute_durations_measured, false);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const models::Op& a = g.ops[i];
    const models::Op& b = back.ops[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_EQ(g.stream_names[static_cast<std::size_t>(a.stream)], back.stream_names[static_cast<std::size_t>(b.stream)]);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.category, b.category);
    EXPECT_EQ(a.duration, b.duration);
    EXPECT_EQ(a.collective, b.collective);
    EXPECT_EQ(a.transfer, b.transfer);
    EXPECT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(a.to_device, b.to_device);
    EXPECT_EQ(a.deps, b.deps);
  }
  ASSERT_EQ(back.collectives.size(), 2u);
  const models::CollectiveCall& c = back.collectives[0];
  EXPECT_EQ(c.kind, mc::CollectiveKind::kAllToAll);
  EXPECT_EQ(c.ranks, (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(c.all_to_all_v_bytes, g.collectives[0].all_to_all_v_bytes);
  EXPECT_EQ(c.dtype, mc::DataType::kFp16);
  EXPECT_EQ(c.algorithm, "nccl_p2p");
  EXPECT_EQ(c.root, 1);
  EXPECT_EQ(back.collectives[1].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(back.collectives[1].bytes_per_rank, sim::Bytes(1 << 20));
  ASSERT_EQ(back.transfers.size(), 1u);
  EXPECT_EQ(back.transfers[0].size, sim::Bytes(4096));
}

TEST(ChakraExportTest, TheSchemaFieldsSayWhatChakraToolsRead) {
  const std::vector<chakra_et::File> files = export_chakra(every_kind_of_op());
  ASSERT_EQ(files.size(), 3u);
  const chakra_et::File& rank1 = files[1];
  ASSERT_TRUE(rank1.metadata);
  // fwd, h2d, a2a, send, wait: the order the importer restores.
  ASSERT_EQ(rank1.nodes.size(), 5u);
  EXPECT_EQ(rank1.nodes[0].type, 4);  // COMP_NODE
  EXPECT_EQ(rank1.nodes[0].duration_micros, 1u);  // 1.234568 us, rounded
  EXPECT_EQ(rank1.nodes[1].type, 3);  // GPU to host: MEM_STORE_NODE
  EXPECT_EQ(rank1.nodes[2].type, 7);  // COMM_COLL_NODE
  EXPECT_EQ(rank1.nodes[2].data_deps, (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(rank1.nodes[3].type, 5);  // COMM_SEND_NODE
  EXPECT_EQ(rank1.nodes[4].type, 1);  // a delay: METADATA_NODE
  // The delay follows the host copy on its stream: a control dependency.
  EXPECT_EQ(rank1.nodes[4].ctrl_deps, (std::vector<std::uint64_t>{1}));
  const auto attr = [](const chakra_et::Node& n, const std::string& name) -> const chakra_et::Attribute* {
    for (const chakra_et::Attribute& a : n.attr) {
      if (a.name == name) return &a;
    }
    return nullptr;
  };
  ASSERT_NE(attr(rank1.nodes[2], "comm_type"), nullptr);
  EXPECT_EQ(attr(rank1.nodes[2], "comm_type")->integer, 6);  // ALL_TO_ALL
  EXPECT_EQ(attr(rank1.nodes[2], "pg_name")->text, "zionsim_group_0");
  EXPECT_EQ(attr(rank1.nodes[3], "comm_dst")->integer, 2);
  EXPECT_EQ(attr(rank1.nodes[3], "comm_size")->integer, 4096);
}

TEST(ChakraExportTest, WhatChakraCannotSayIsRefused) {
  models::OpGraph g = every_kind_of_op();
  g.ops[5].deps.push_back(0);  // rank 1 waits on an op of rank 0
  try {
    (void)export_chakra(g);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(e.diagnostics()[0].to_string().find("Chakra's dependencies stay within a rank"), std::string::npos)
        << e.diagnostics()[0].to_string();
  }
  models::OpGraph h = every_kind_of_op();
  EXPECT_EQ(chakra_rank_path("out/iter.et", 3), "out/iter.3.et");
  EXPECT_EQ(chakra_rank_path("iter.et.gz", 0), "iter.0.et.gz");
  EXPECT_THROW((void)chakra_rank_path("iter.json", 0), InputError);
}

}  // namespace
}  // namespace zx::workloads
