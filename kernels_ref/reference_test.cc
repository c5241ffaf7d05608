// File: kernels_ref/reference_test.cc
//
// Tests of the CPU references the CUDA suite checks its kernels against: if
// these are wrong, every GPU check passes or fails for the wrong reason.
// Expected values are worked by hand in the comments (IEEE 754 binary16 and
// bfloat16 encodings; small GEMMs and bags summed on paper).

#include "kernels_ref/reference.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include <gtest/gtest.h>

namespace kref {
namespace {

// fp16 encodings: 1.0 = 0x3c00, -2.0 = 0xc000, 65504 (max) = 0x7bff, the
// smallest subnormal 2^-24 = 0x0001, infinity 0x7c00.
TEST(Fp16, KnownEncodings) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(half_bits_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(std::nanf("")))));
}

// Ties go to even: 1 + 2^-11 is halfway between 1 (even mantissa) and
// 1 + 2^-10, so it rounds down; 1 + 3 * 2^-11 is halfway between 1 + 2^-10
// (odd) and 1 + 2^-9, so it rounds up. 65520 is halfway to 65536: infinity.
TEST(Fp16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_half_bits(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);
  // Subnormal ties: 2^-25 is halfway between 0 and 2^-24 -> 0; 3 * 2^-25 -> 2 * 2^-24.
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(float_to_half_bits(3 * std::ldexp(1.0f, -25)), 0x0002);
}

// Every finite fp16 value survives the round trip through float.
TEST(Fp16, RoundTripsEveryFiniteValue) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    if ((bits & 0x7c00) == 0x7c00) continue;  // inf and NaN
    const std::uint16_t h = static_cast<std::uint16_t>(bits);
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(h)), h) << bits;
  }
}

// bf16 keeps the top 16 bits: 1.0 = 0x3f80; 1 + 2^-8 is halfway between 1
// and 1 + 2^-7 and rounds to even (1.0); 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
TEST(Bf16, KnownEncodingsAndTies) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits_to_float(0x3f80), 1.0f);
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::nanf("")))));
  EXPECT_EQ(round_to(Format::kBf16, 3.0f), 3.0f);
  EXPECT_EQ(format_bytes(Format::kBf16), 2);
}

// Same seed, same indices; uniform indices cover the rows evenly; Zipf
// indices put row 0 first: for alpha = 1.2 over 1000 rows, P(row 0) =
// 1 / H(1000, 1.2) ~ 0.22 (H the generalised harmonic number ~ 4.5), so
// about 2200 of 10000 draws.
TEST(Indices, DeterministicUniformAndZipf) {
  const auto a = generate_indices(10000, 1000, IndexDistribution::kUniform, 0, 7);
  EXPECT_EQ(a, generate_indices(10000, 1000, IndexDistribution::kUniform, 0, 7));
  std::vector<int> counts(1000);
  for (std::int64_t v : a) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 1000);
    ++counts[v];
  }
  for (int c : counts) EXPECT_LT(c, 40);  // mean 10
  const auto z = generate_indices(10000, 1000, IndexDistribution::kZipf, 1.2, 7);
  std::map<std::int64_t, int> zc;
  for (std::int64_t v : z) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 1000);
    ++zc[v];
  }
  double harmonic = 0;
  for (int k = 1; k <= 1000; ++k) harmonic += std::pow(k, -1.2);
  EXPECT_NEAR(zc[0] / 10000.0, 1.0 / harmonic, 0.02);
  EXPECT_GT(zc[0], zc[1]);
  EXPECT_GT(zc[1], zc[5]);
  EXPECT_THROW(generate_indices(1, 0, IndexDistribution::kUniform, 0, 1), std::invalid_argument);
}

// Column-major 2x2: A = [1 2; 3 4] (stored 1, 3, 2, 4), B = [5 6; 7 8]
// (stored 5, 7, 6, 8): AB = [19 22; 43 50], stored 19, 43, 22, 50.
TEST(Gemm, ColumnMajorTwoByTwo) {
  const float a[] = {1, 3, 2, 4};
  const float b[] = {5, 7, 6, 8};
  float c[4];
  gemm_ref(2, 2, 2, a, b, c);
  EXPECT_EQ(c[0], 19);
  EXPECT_EQ(c[1], 43);
  EXPECT_EQ(c[2], 22);
  EXPECT_EQ(c[3], 50);
  float cb[8];
  const float a2[] = {1, 3, 2, 4, 1, 0, 0, 1};
  const float b2[] = {5, 7, 6, 8, 5, 7, 6, 8};
  gemm_batched_ref(2, 2, 2, 2, a2, b2, cb);
  EXPECT_EQ(cb[3], 50);
  EXPECT_EQ(cb[4], 5);  // identity times B
  EXPECT_EQ(cb[7], 8);
}

// T = 2 tables of E = 3 rows, D = 2; row r of table t holds (10t + r, -r).
// Bags (L = 2, B = 2): table 0 sample 0 looks up rows 0 and 2 -> (2, -2);
// table 1 sample 1 looks up row 1 twice -> (22, -2). Output is [B][T][D].
TEST(Tbe, ForwardSumsBags) {
  const TbeShape s{2, 3, 2, 2, 2};
  std::vector<float> w;
  for (int t = 0; t < 2; ++t)
    for (int r = 0; r < 3; ++r) w.insert(w.end(), {10.0f * t + r, -1.0f * r});
  const std::int64_t idx[] = {0, 2, 1, 1, /*table 1*/ 2, 0, 1, 1};
  std::vector<float> out(8);
  tbe_forward_ref(s, w.data(), idx, Format::kFp32, out.data());
  EXPECT_EQ(out[0], 2);  // b0 t0
  EXPECT_EQ(out[1], -2);
  EXPECT_EQ(out[2], 22);  // b0 t1: rows 2 and 0 of table 1 -> 12 + 10
  EXPECT_EQ(out[3], -2);
  EXPECT_EQ(out[4], 2);   // b1 t0: row 1 twice
  EXPECT_EQ(out[6], 22);  // b1 t1: row 1 twice -> 11 + 11
  EXPECT_EQ(out[7], -2);
}

// One table, E = 2, D = 2, B = 2, L = 2. Sample 0 looks up rows 0, 0;
// sample 1 rows 0, 1. grad_out: sample 0 (1, 1), sample 1 (2, 0).
// Row 0 gets 1+1+2 = (4, 2): mean g^2 = 10, m = 10, w0 -= 0.1 (4, 2) / sqrt(10).
// Row 1 gets (2, 0): m = 2, w1 -= 0.1 (2, 0) / sqrt(2). eps = 0.
TEST(Tbe, BackwardRowwiseAdagrad) {
  const TbeShape s{1, 2, 2, 2, 2};
  const std::int64_t idx[] = {0, 0, 0, 1};
  const float grad_out[] = {1, 1, 2, 0};
  std::vector<float> w = {1, 1, 1, 1};
  std::vector<float> m = {0, 0};
  tbe_backward_adagrad_ref(s, idx, grad_out, Format::kFp32, 0.1f, 0.0f, w.data(), m.data());
  EXPECT_FLOAT_EQ(m[0], 10);
  EXPECT_FLOAT_EQ(m[1], 2);
  EXPECT_FLOAT_EQ(w[0], 1 - 0.4f / std::sqrt(10.0f));
  EXPECT_FLOAT_EQ(w[1], 1 - 0.2f / std::sqrt(10.0f));
  EXPECT_FLOAT_EQ(w[2], 1 - 0.2f / std::sqrt(2.0f));
  EXPECT_FLOAT_EQ(w[3], 1);
}

// The backward rounds the updated weights to their storage format.
TEST(Tbe, BackwardRoundsToWeightFormat) {
  const TbeShape s{1, 1, 1, 1, 1};
  const std::int64_t idx[] = {0};
  const float grad_out[] = {1};
  std::vector<float> w = {1};
  std::vector<float> m = {0};
  // m = 1, w = 1 - 1e-3 / (1 + 0): not representable in fp16, rounds to 0.99902344.
  tbe_backward_adagrad_ref(s, idx, grad_out, Format::kFp16, 1e-3f, 0.0f, w.data(), m.data());
  EXPECT_EQ(w[0], round_to(Format::kFp16, 0.999f));
}

// Pack [T][B][D] -> [R][B/R][T][D]; unpack inverts it; B % R != 0 throws.
TEST(AllToAll, PackUnpackRoundTrip) {
  const std::int64_t t = 3, b = 4, d = 2, r = 2;
  std::vector<float> x(t * b * d);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  std::vector<float> packed(x.size()), back(x.size());
  a2a_pack_ref(t, b, d, r, x.data(), packed.data());
  // packed[(sample 1, table 2)] = x[(table 2, sample 1)] = (2*4 + 1)*2 = 18.
  EXPECT_EQ(packed[(1 * t + 2) * d], 18);
  a2a_unpack_ref(t, b, d, r, packed.data(), back.data());
  EXPECT_EQ(back, x);
  EXPECT_THROW(a2a_pack_ref(t, 3, d, r, x.data(), packed.data()), std::invalid_argument);
}

// X = [[1, 2], [3, 4]] (F = 2, D = 2): X X^T = [[5, 11], [11, 25]].
TEST(Interaction, DotProducts) {
  const float x[] = {1, 2, 3, 4};
  float z[4];
  dot_interaction_ref(1, 2, 2, x, z);
  EXPECT_EQ(z[0], 5);
  EXPECT_EQ(z[1], 11);
  EXPECT_EQ(z[2], 11);
  EXPECT_EQ(z[3], 25);
}

// s = 0.5 + 2^2 = 4.5; w = 1 - 0.1 * 2 / sqrt(4.5).
TEST(Elementwise, AdagradReduceConvert) {
  const float g[] = {2};
  float w[] = {1};
  float s[] = {0.5f};
  adagrad_step_ref(1, g, 0.1f, 0.0f, w, s);
  EXPECT_FLOAT_EQ(s[0], 4.5f);
  EXPECT_FLOAT_EQ(w[0], 1 - 0.2f / std::sqrt(4.5f));
  const float a[] = {1, 2}, b[] = {3, 4};
  float out[2];
  reduce_add_ref(2, a, b, out);
  EXPECT_EQ(out[1], 6);
  const float in[] = {1.0f + std::ldexp(1.0f, -12)};
  float conv[1];
  convert_ref(1, in, Format::kFp16, conv);
  EXPECT_EQ(conv[0], 1.0f);
}

// Bytes as the cost models count them. D = 72 fp16 rows are 144 bytes,
// sector-rounded to 160. Forward, T = 2, B = 3, L = 4 (24 lookups), fp16
// out: gathered 24 * 160 = 3840; streamed 24 * 8 + 3*2*72*2 = 1056.
// Backward: gathered 24 * (320 + 64) = 9216; streamed 864 + 192 + 24*48 = 2208.
TEST(Formulas, BytesAndFlops) {
  EXPECT_EQ(sector_round(1), 32);
  EXPECT_EQ(sector_round(32), 32);
  EXPECT_EQ(sector_round(144), 160);
  EXPECT_EQ(gemm_flops(2, 3, 4, 5), 240);
  EXPECT_EQ(gemm_bytes(2, 3, 4, 1, 2), (8 + 12 + 6) * 2);
  const TbeShape s{2, 100, 72, 4, 3};
  const TbeBytes f = tbe_forward_bytes(s, Format::kFp16, Format::kFp16);
  EXPECT_EQ(f.gathered, 3840);
  EXPECT_EQ(f.streamed, 1056);
  const TbeBytes b = tbe_backward_bytes(s, Format::kFp16, Format::kFp16);
  EXPECT_EQ(b.gathered, 9216);
  EXPECT_EQ(b.streamed, 2208);
  EXPECT_EQ(b.total(), 11424);
}

}  // namespace
}  // namespace kref
