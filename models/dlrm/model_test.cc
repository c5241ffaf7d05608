// Tests of DLRM model files: the zoo's models reproduce their published
// parameter and FLOP totals, the DCNv2 model matches MLCommons' shape, and
// bad model files get precise errors.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/error.h"
#include "models/dlrm/model.h"

namespace zx::models {
namespace {

std::string errors_of(const std::string& text) {
  try {
    parse_model(text, "m.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The paper's totals (ISCA 2022): A 793 B parameters and 638 MFLOPs per
// sample, I 332 B and 60 MFLOPs, F 12 T and 5 MFLOPs. MAD-Max's uniform
// tables reproduce them within about 1% (A's tables give 801 B).
TEST(ModelZooTest, PaperModelsMatchPublishedTotals) {
  struct Expected {
    const char* name;
    double parameters;
    double mflops;
    double parameter_tolerance;
  };
  for (const Expected& e : {Expected{"dlrm-a", 793e9, 638, 0.015}, Expected{"dlrm-i", 332e9, 60, 0.01},
                            Expected{"dlrm-f", 12e12, 5, 0.01}}) {
    const DlrmModel m = load_model(e.name);
    EXPECT_NEAR(static_cast<double>(m.parameters()), e.parameters, e.parameters * e.parameter_tolerance)
        << e.name;
    EXPECT_NEAR(m.forward_flops_per_sample() / 1e6, e.mflops, e.mflops * 0.01) << e.name;
  }
  // Model A exactly: 4096 x 2.08 M x 94 embedding weights; 20 layers of 3994^2 (+ bias).
  const DlrmModel a = load_model("dlrm-a");
  EXPECT_EQ(a.embedding_parameters(), 4096LL * 2'080'000 * 94);
  EXPECT_EQ(a.dense_parameters(), 20LL * (3994 * 3994 + 3994));
  EXPECT_EQ(a.forward_flops_per_sample(), 20.0 * 2 * 3994 * 3994);
  EXPECT_EQ(a.lookups_per_sample(), 4096.0 * 15);
  // About 1.6 TB of fp16 embeddings: more than one node's 320 GB of HBM.
  EXPECT_NEAR(a.embedding_bytes(), 1.6e12, 0.01e12);
  // F's 24 TB of embeddings cannot live in 128 GPUs' 5 TB of HBM.
  EXPECT_GT(load_model("dlrm-f").embedding_bytes(), 23e12);
  // The small variant has 130,000 rows per table and the same dense part.
  const DlrmModel small = load_model("dlrm-a-small");
  EXPECT_EQ(small.embedding_parameters(), 4096LL * 130'000 * 94);
  EXPECT_EQ(small.dense_parameters(), a.dense_parameters());
}

// DLRM-DCNv2: 26 tables of dim 128, 13 dense features, bottom 512-256-128,
// 3 low-rank cross layers over 27 x 128 = 3456 features, top 1024-...-1.
TEST(ModelZooTest, DcnV2MatchesMlcommonsShape) {
  const DlrmModel m = load_model("dlrm-dcnv2");
  EXPECT_EQ(m.num_tables(), 26);
  EXPECT_EQ(m.dense_features, 13);
  EXPECT_EQ(m.bottom_mlp.output(), 128);
  EXPECT_EQ(m.interaction_output(), 3456);
  EXPECT_EQ(m.top_mlp.input, 3456);
  EXPECT_EQ(m.top_mlp.output(), 1);
  // Multi-hot sizes sum to 214 lookups per sample.
  EXPECT_EQ(m.lookups_per_sample(), 214.0);
  std::int64_t rows = 0;
  for (const TableGroup& t : m.tables) rows += t.rows;
  EXPECT_EQ(rows, 204'184'588);
  EXPECT_EQ(m.embedding_parameters(), rows * 128);
  // Dense: MLPs plus 3 x (2 x 3456 x 512 + 3456) cross weights.
  const std::int64_t bottom = 13 * 512 + 512 + 512 * 256 + 256 + 256 * 128 + 128;
  const std::int64_t top = 3456 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 512 + 512 +
                           512 * 256 + 256 + 256 * 1 + 1;
  EXPECT_EQ(m.dense_parameters(), bottom + top + 3 * (2 * 3456 * 512 + 3456));
}

TEST(ModelZooTest, UnknownNamesAndListing) {
  EXPECT_EQ(model_zoo_descriptions().size(), 6u);
  try {
    load_model("dlrm-b");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--model: unknown model 'dlrm-b' (did you mean 'dlrm-a'?); valid: dlrm-a, dlrm-a-small, "
              "dlrm-dcnv2, dlrm-f, dlrm-i, dlrm-mlperf, or the path of a .json model file");
  }
}

// A user's own file: a classic dot-interaction DLRM (dims must match the
// bottom MLP output), with every problem of a bad file reported.
TEST(ModelFileTest, DotInteractionAndErrors) {
  const DlrmModel m = parse_model(R"({
    "schema_version": 1, "name": "mine", "dense_features": 13,
    "tables": [{"count": 8, "rows": 1000, "dim": 16, "pooling": 2}],
    "bottom_mlp": {"widths": [64, 16]}, "interaction": {"kind": "dot"},
    "top_mlp": {"widths": [32, 1]}})",
                                  "mine.json");
  EXPECT_EQ(m.interaction_features(), 9);
  EXPECT_EQ(m.top_mlp.input, 9 * 8 / 2 + 16);
  EXPECT_EQ(m.embedding_type, DataType::kFp16);

  EXPECT_EQ(errors_of(R"({"schema_version": 1, "name": "x", "dense_features": 13,
    "tables": [{"count": 8, "rows": 0, "dim": 32, "pooling": 2, "hot": 1}],
    "bottom_mlp": {"widths": [64, 16], "width": 3}, "interaction": {"kind": "dcn"},
    "top_mlp": {"width": 3}, "embedding_dtype": "int8"})"),
            "m.json: /embedding_dtype: unknown value 'int8'; valid: bf16, fp16, fp32, fp8\n"
            "m.json: /tables/0/rows: expected an integer in [1, 1099511627776], got 0\n"
            "m.json: /tables/0: unknown key 'hot'; valid: count, dim, name, pooling, rows, zipf_alpha\n"
            "m.json: /bottom_mlp: give either 'widths' or 'width' and 'layers', not both\n"
            "m.json: /interaction: missing required key 'cross_layers'\n"
            "m.json: /interaction: missing required key 'rank'\n"
            "m.json: /top_mlp: missing required key 'layers'");
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "name": "x", "dense_features": 13,
    "tables": [{"rows": 10, "dim": 32, "pooling": 2}],
    "bottom_mlp": {"widths": [16]}, "interaction": {"kind": "dot"}, "top_mlp": {"widths": [1]}})"),
            "m.json: /tables/0/dim: a dot interaction needs every table's dim to equal the bottom MLP "
            "output 16, got 32");
  // A group's skew: optional, in [0, 10].
  EXPECT_FALSE(m.tables[0].zipf_alpha.has_value());
  const DlrmModel skewed = parse_model(R"({"schema_version": 1, "name": "x", "dense_features": 13,
    "tables": [{"rows": 10, "dim": 16, "pooling": 2, "zipf_alpha": 1.1}],
    "bottom_mlp": {"widths": [16]}, "interaction": {"kind": "dot"}, "top_mlp": {"widths": [1]}})",
                                       "x.json");
  EXPECT_EQ(skewed.tables[0].zipf_alpha, 1.1);
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "name": "x", "dense_features": 13,
    "tables": [{"rows": 10, "dim": 16, "pooling": 2, "zipf_alpha": 11}],
    "bottom_mlp": {"widths": [16]}, "interaction": {"kind": "dot"}, "top_mlp": {"widths": [1]}})"),
            "m.json: /tables/0/zipf_alpha: expected a number in [0, 10], got 11");
}

}  // namespace
}  // namespace zx::models
