#include "models/compute/device_profile.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_reader.h"

namespace zx::models {
namespace {

constexpr double kTera = 1e12;
constexpr int kSchemaVersion = 1;

struct TypeName {
  DataType type;
  const char* name;
  int bytes;
};
constexpr TypeName kTypes[] = {{DataType::kFp32, "fp32", 4},
                               {DataType::kTf32, "tf32", 4},
                               {DataType::kFp16, "fp16", 2},
                               {DataType::kBf16, "bf16", 2},
                               {DataType::kFp8, "fp8", 1}};

// --- built-in profiles ------------------------------------------------------
//
// Efficiencies: MAD-Max's calibrated ZionEX A100 numbers (compute 0.705 of
// peak, HBM 0.836; facebookresearch/ScaleExplorer madmax system configs,
// ../shared/ARCHITECTURE.md). Marked "assumption" where no source is known;
// kernels_ref + calibration replace them with measured values.

DeviceProfile a100(std::string name, double hbm_gbyte_per_s, std::int64_t hbm_gib) {
  DeviceProfile p;
  p.name = std::move(name);
  // NVIDIA A100 Tensor Core GPU datasheet (2021): FP32 19.5 TF; TF32 156 TF,
  // BF16/FP16 312 TF dense; 108 SMs; HBM2(e) 1,555 GB/s (40GB), 2,039 GB/s (80GB SXM).
  p.peak_fp32_flops = 19.5 * kTera;
  p.peak_tf32_flops = 156 * kTera;
  p.peak_fp16_flops = 312 * kTera;
  p.peak_bf16_flops = 312 * kTera;
  p.peak_fp8_flops = 0;  // Ampere has no FP8 tensor cores
  p.sm_count = 108;
  // NCCL's maintainer (NVIDIA/nccl issue 689): NCCL uses the fewest SMs
  // that reach the platform's speed, "on DGX with 8 NICs ... 16 SMs", one
  // thread block (channel) per SM, not shared with compute kernels. ZionEX
  // has DGX A100's shape (8 GPUs, 8 x 200 Gbit/s NICs, NVSwitch).
  p.communication_sms = 16;
  p.hbm_capacity = sim::Bytes::gib(hbm_gib);
  p.hbm_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(hbm_gbyte_per_s);
  p.compute_efficiency = 0.705;  // MAD-Max ZionEX
  p.hbm_efficiency = 0.836;      // MAD-Max ZionEX
  // Assumption: table-batched embedding gathers of ~200-byte rows reach about
  // 65% of peak HBM bandwidth beyond sector rounding (FBGEMM TBE benchmarks
  // report 60-70% on A100 for fp16 rows of 64-128 elements).
  p.embedding_hbm_efficiency = 0.65;
  p.gemm_k_half = 64;  // assumption: half efficiency at K = 64
  // CUTLASS / cuBLAS default 128 x 128 threadblock tiles for large GEMMs.
  p.gemm_tile_m = 128;
  p.gemm_tile_n = 128;
  p.kernel_launch = sim::Duration::us(3);  // assumption: back-to-back launch gap
  // ZionEX hosts reach the GPU trays over PCIe Gen3 x16 (ARCHITECTURE.md):
  // ~15.75 GB/s raw, ~12 GB/s achieved for pinned copies (assumption).
  p.host_to_device_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(12);
  return p;
}

// A GPU after the A100 on a PCIe Gen5 host: A100's calibrated ZionEX
// efficiencies, GEMM shape parameters and launch gap carry over
// (assumption) until kernels_ref measurements on it replace them; NCCL's
// 16 channels on an 8-GPU, 8-NIC server stay 16 SMs (on H100: the "Channel
// NN/16" lines of an H100 cluster's NCCL log, NVIDIA/nccl issue 1453).
DeviceProfile after_a100(std::string name, double hbm_gbyte_per_s, std::int64_t hbm_gib) {
  DeviceProfile p = a100(std::move(name), hbm_gbyte_per_s, 0);
  p.hbm_capacity = sim::Bytes::gib(hbm_gib);
  // Assumption: PCIe Gen5 x16 (~63 GB/s raw), ~50 GB/s achieved pinned copies.
  p.host_to_device_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(50);
  return p;
}

DeviceProfile hopper(std::string name, double hbm_gbyte_per_s, std::int64_t hbm_gib) {
  DeviceProfile p = after_a100(std::move(name), hbm_gbyte_per_s, hbm_gib);
  // NVIDIA H100 Tensor Core GPU datasheet (SXM5): FP32 67 TF; TF32 494.7 TF,
  // BF16/FP16 989.4 TF, FP8 1,978.9 TF dense (half the sparsity figures);
  // 132 SMs. H200 (SXM) has the same compute with 141 GB HBM3e at 4.8 TB/s.
  p.peak_fp32_flops = 67 * kTera;
  p.peak_tf32_flops = 494.7 * kTera;
  p.peak_fp16_flops = 989.4 * kTera;
  p.peak_bf16_flops = 989.4 * kTera;
  p.peak_fp8_flops = 1978.9 * kTera;
  p.sm_count = 132;
  return p;
}

DeviceProfile blackwell(std::string name) {
  // A B200's device query (pytorch/ao pull request 4002): 148 SMs, 178.35
  // GiB of global memory, a 7,680-bit bus at 3,996 MHz (DDR): 7,672 GB/s.
  // NVIDIA quotes 180 GB and 8 TB/s (DGX B200: 1,440 GB and 64 TB/s for 8);
  // the bus width and clock give the peak a kernel can approach. DGX B200's
  // GPUs hang off PCIe Gen5 switches as DGX H100's (NVIDIA DGX B200 user
  // guide).
  DeviceProfile p = after_a100(std::move(name), 7672, 178);
  // HGX B200 (8 GPUs, NVIDIA HGX platform specifications): FP32 600 TF,
  // TF32 18 PF, FP16/BF16 36 PF, FP8 72 PF, the tensor figures with
  // sparsity; per GPU and dense (half): FP32 75 TF, TF32 1,125 TF, BF16/FP16
  // 2,250 TF, FP8 4,500 TF (torchao's roofline table has the same 2.25e15
  // bf16 and 4.5e15 fp8: pytorch/ao pull request 4002).
  p.peak_fp32_flops = 75 * kTera;
  p.peak_tf32_flops = 1125 * kTera;
  p.peak_fp16_flops = 2250 * kTera;
  p.peak_bf16_flops = 2250 * kTera;
  p.peak_fp8_flops = 4500 * kTera;
  p.sm_count = 148;
  return p;
}

DeviceProfile grace_blackwell(std::string name) {
  // GB200's Blackwell runs at 1,200 W where HGX B200's runs at 1,000 W.
  // NVIDIA's GB200 NVL72 figures for 72 GPUs, with sparsity for the tensor
  // types: FP32 5,760 TF, TF32 360 PF, FP16/BF16 720 PF, FP8 1,440 PF; per
  // GPU, dense (half the tensor figures): FP32 80 TF, TF32 2,500 / 2 = 1,250
  // TF, BF16/FP16 2,500 TF, FP8 5,000 TF. 13.4 TB of HBM3e at 576 TB/s for
  // 72: 186 GB (the capacity MLCommons GB200 systems report) at 8,000 GB/s
  // per GPU. The SM count is B200's (same die pair).
  DeviceProfile p = blackwell(std::move(name));
  p.peak_fp32_flops = 80 * kTera;
  p.peak_tf32_flops = 1250 * kTera;
  p.peak_fp16_flops = 2500 * kTera;
  p.peak_bf16_flops = 2500 * kTera;
  p.peak_fp8_flops = 5000 * kTera;
  p.hbm_capacity = sim::Bytes(186'000'000'000);
  p.hbm_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(8000);
  // Host copies cross NVLink-C2C, not PCIe. A GH200 reaches 346 GB/s
  // host-to-device (copy engine) over its 450 GB/s per direction of C2C
  // (NVIDIA/nvbandwidth issue 23): 77%. Assumption: the same share of the
  // 225 GB/s per direction each GB200 GPU gets (topology/presets.cc).
  p.host_to_device_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(225.0 * 346.0 / 450.0);
  return p;
}

// Blackwell Ultra (B300, GB300): the Blackwell die pair with 288 GB of
// HBM3e (8 stacks of 12-high; NVIDIA's technical blog "Inside NVIDIA
// Blackwell Ultra", Aug 2025) and FP4 faster, INT8 and FP64 slower; the
// types a DLRM trains in keep Blackwell's rates (per GPU, dense: HGX B300
// 2,250 TF bf16 and 4,500 TF fp8 as HGX B200, NVIDIA HGX specifications;
// GB300 NVL72's rack 180 PF bf16 and 360 PF fp8 dense for 72 GPUs = 2,500
// and 5,000 TF as GB200). Usable capacity: 270 GB on B300, 279 GB on GB300
// (the per-GPU tables of Verda's GB300 NVL72 architecture post; 288 GB
// physical). The blog gives 160 SMs for the full implementation, which is
// also the full B200 (shipped with 148); assumption: 148 enabled, as B200.
DeviceProfile blackwell_ultra(std::string name) {
  DeviceProfile p = blackwell(std::move(name));
  p.hbm_capacity = sim::Bytes(270'000'000'000);
  return p;
}

DeviceProfile grace_blackwell_ultra(std::string name) {
  DeviceProfile p = grace_blackwell(std::move(name));
  p.hbm_capacity = sim::Bytes(279'000'000'000);
  return p;
}

struct BuiltIn {
  const char* name;
  const char* description;
  DeviceProfile (*make)();
};

const BuiltIn kBuiltIns[] = {
    {"a100-40gb", "NVIDIA A100 SXM4 40GB (ZionEX): 312 TF bf16, 1,555 GB/s HBM2; MAD-Max efficiencies",
     [] { return a100("a100-40gb", 1555, 40); }},
    {"a100-80gb", "NVIDIA A100 SXM4 80GB: 312 TF bf16, 2,039 GB/s HBM2e",
     [] { return a100("a100-80gb", 2039, 80); }},
    {"h100-sxm", "NVIDIA H100 SXM5 80GB: 989 TF bf16, 1,979 TF fp8, 3,350 GB/s HBM3",
     [] { return hopper("h100-sxm", 3350, 80); }},
    {"h200", "NVIDIA H200 SXM 141GB: H100 compute, 4,800 GB/s HBM3e",
     [] { return hopper("h200", 4800, 141); }},
    {"b200", "NVIDIA B200 (HGX) 180GB: 2,250 TF bf16, 4,500 TF fp8, 7,672 GB/s HBM3e",
     [] { return blackwell("b200"); }},
    {"gb200", "NVIDIA GB200 (NVL72) Blackwell 186GB: 2,500 TF bf16, 5,000 TF fp8, 8,000 GB/s HBM3e, host on NVLink-C2C",
     [] { return grace_blackwell("gb200"); }},
    {"b300", "NVIDIA B300 (HGX) Blackwell Ultra 270GB: 2,250 TF bf16, 4,500 TF fp8, 7,672 GB/s HBM3e",
     [] { return blackwell_ultra("b300"); }},
    {"gb300", "NVIDIA GB300 (NVL72) Blackwell Ultra 279GB: 2,500 TF bf16, 5,000 TF fp8, 8,000 GB/s HBM3e, host on "
              "NVLink-C2C",
     [] { return grace_blackwell_ultra("gb300"); }},
};

std::vector<std::string> builtin_names() {
  std::vector<std::string> names;
  for (const BuiltIn& b : kBuiltIns) names.emplace_back(b.name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::string_view to_string(DataType type) {
  for (const TypeName& t : kTypes) {
    if (t.type == type) return t.name;
  }
  return "unknown";
}

DataType parse_data_type(std::string_view name) {
  for (const TypeName& t : kTypes) {
    if (name == t.name) return t.type;
  }
  throw std::invalid_argument(
      fmt::format("unknown data type '{}'; valid: bf16, fp16, fp32, fp8, tf32", name));
}

int element_bytes(DataType type) {
  for (const TypeName& t : kTypes) {
    if (t.type == type) return t.bytes;
  }
  return 4;
}

double DeviceProfile::peak_flops(DataType type) const {
  double peak = 0;
  switch (type) {
    case DataType::kFp32: peak = peak_fp32_flops; break;
    case DataType::kTf32: peak = peak_tf32_flops; break;
    case DataType::kFp16: peak = peak_fp16_flops; break;
    case DataType::kBf16: peak = peak_bf16_flops; break;
    case DataType::kFp8: peak = peak_fp8_flops; break;
  }
  if (!(peak > 0)) {
    throw std::invalid_argument(
        fmt::format("device '{}' has no {} compute (peak 0)", name, to_string(type)));
  }
  return peak;
}

double DeviceProfile::effective_hbm_bytes_per_s() const {
  return static_cast<double>(hbm_bandwidth.count()) * hbm_efficiency;
}

std::vector<std::pair<std::string, std::string>> device_profile_descriptions() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const BuiltIn& b : kBuiltIns) out.emplace_back(b.name, b.description);
  std::sort(out.begin(), out.end());
  return out;
}

DeviceProfile builtin_device_profile(std::string_view name) {
  for (const BuiltIn& b : kBuiltIns) {
    if (name == b.name) {
      DeviceProfile p = b.make();
      p.description = b.description;
      return p;
    }
  }
  const std::vector<std::string> names = builtin_names();
  std::string message = fmt::format("unknown GPU profile '{}'", name);
  if (auto guess = json::closest_match(name, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
  message += fmt::format("; valid: {}, or the path of a .json profile", fmt::join(names, ", "));
  throw InputError(Diagnostic{"--gpu", "", message});
}

void validate(const DeviceProfile& p, const std::string& source) {
  std::vector<Diagnostic> errors;
  const auto need = [&](bool ok, const char* field, std::string message) {
    if (!ok) errors.push_back({source, field, std::move(message)});
  };
  for (auto [value, field] : {std::pair{p.compute_efficiency, "/efficiency/compute"},
                              std::pair{p.hbm_efficiency, "/efficiency/hbm"},
                              std::pair{p.embedding_hbm_efficiency, "/efficiency/embedding_hbm"}}) {
    need(value >= sim::kMinEfficiency && value <= 1, field,
         fmt::format("expected a number in [{}, 1], got {}", sim::kMinEfficiency, value));
  }
  need(p.peak_fp32_flops > 0, "/peak_tflops/fp32", "expected a positive FP32 peak");
  need(p.sm_count > 0, "/sm_count", fmt::format("expected a positive SM count, got {}", p.sm_count));
  need(p.communication_sms >= 0 && p.communication_sms < p.sm_count, "/communication_sms",
       fmt::format("expected an SM count in [0, sm_count = {}), got {}", p.sm_count, p.communication_sms));
  need(p.hbm_capacity.count() > 0, "/hbm/capacity_gib", "expected a positive HBM capacity");
  need(p.gemm_k_half >= 0, "/gemm/k_half", fmt::format("expected >= 0, got {}", p.gemm_k_half));
  need(p.gemm_unaligned_efficiency >= sim::kMinEfficiency && p.gemm_unaligned_efficiency <= 1,
       "/gemm/unaligned_efficiency",
       fmt::format("expected a number in [{}, 1], got {}", sim::kMinEfficiency, p.gemm_unaligned_efficiency));
  need(p.gemm_tile_m > 0 && p.gemm_tile_n > 0, "/gemm", "expected positive tile sizes");
  need(p.kernel_launch >= sim::Duration::zero(), "/kernel_launch_ns", "expected >= 0");
  need(p.embedding_row_access_ns >= 0, "/embedding_row_access_ns",
       fmt::format("expected >= 0, got {}", p.embedding_row_access_ns));
  need(p.embedding_backward_overhead_ns >= 0, "/embedding_backward_overhead_ns",
       fmt::format("expected >= 0, got {}", p.embedding_backward_overhead_ns));
  if (!errors.empty()) throw InputError(std::move(errors));
}

DeviceProfile parse_device_profile(std::string_view text, const std::string& source) {
  json::Document doc = json::Document::parse(text, source);
  json::ObjectReader root = doc.root();
  doc.check_schema_version(root, {kSchemaVersion});
  DeviceProfile p = builtin_device_profile("a100-40gb");
  std::string base;
  if (root.read_enum("base", base, builtin_names())) p = builtin_device_profile(base);
  root.read_string("name", p.name);
  root.read_string("description", p.description);
  root.allow("provenance");  // free-form: where calibration got its numbers
  if (auto o = root.object("peak_tflops")) {
    const json::NumberRange range{0.0, 1e6};
    double v = 0;
    if (o->read_number("fp32", v, range)) p.peak_fp32_flops = v * kTera;
    if (o->read_number("tf32", v, range)) p.peak_tf32_flops = v * kTera;
    if (o->read_number("fp16", v, range)) p.peak_fp16_flops = v * kTera;
    if (o->read_number("bf16", v, range)) p.peak_bf16_flops = v * kTera;
    if (o->read_number("fp8", v, range)) p.peak_fp8_flops = v * kTera;
    o->finish();
  }
  root.read_int("sm_count", p.sm_count, json::IntRange{1, 4096});
  root.read_int("communication_sms", p.communication_sms, json::IntRange{0, 4096});
  if (auto o = root.object("hbm")) {
    std::int64_t gib = 0;
    if (o->read_int("capacity_gib", gib, json::IntRange{1, 1 << 20})) p.hbm_capacity = sim::Bytes::gib(gib);
    double bw = 0;
    if (o->read_number("bandwidth_gbyte_per_s", bw, json::NumberRange{0.0, 1e6, true})) {
      p.hbm_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(bw);
    }
    o->finish();
  }
  if (auto o = root.object("efficiency")) {
    const json::NumberRange unit{0.0, 1.0};
    o->read_number("compute", p.compute_efficiency, unit);
    o->read_number("hbm", p.hbm_efficiency, unit);
    o->read_number("embedding_hbm", p.embedding_hbm_efficiency, unit);
    o->finish();
  }
  if (auto o = root.object("gemm")) {
    o->read_number("k_half", p.gemm_k_half, json::NumberRange{0.0, 1e6});
    o->read_number("unaligned_efficiency", p.gemm_unaligned_efficiency, json::NumberRange{0.0, 1.0});
    o->read_int("tile_m", p.gemm_tile_m, json::IntRange{1, 4096});
    o->read_int("tile_n", p.gemm_tile_n, json::IntRange{1, 4096});
    o->finish();
  }
  double launch_ns = 0;
  if (root.read_number("kernel_launch_ns", launch_ns, json::NumberRange{0.0, 1e9})) {
    p.kernel_launch = sim::Duration::from_ns_ceil(launch_ns);
  }
  root.read_number("embedding_row_access_ns", p.embedding_row_access_ns, json::NumberRange{0.0, 1e6});
  root.read_number("embedding_backward_overhead_ns", p.embedding_backward_overhead_ns,
                   json::NumberRange{0.0, 1e9});
  double h2d = 0;
  if (root.read_number("host_to_device_gbyte_per_s", h2d, json::NumberRange{0.0, 1e6, true})) {
    p.host_to_device_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(h2d);
  }
  root.finish();
  doc.throw_if_errors();
  validate(p, source);
  return p;
}

DeviceProfile load_device_profile(const std::string& path) {
  json::Document doc = json::Document::load_file(path);
  return parse_device_profile(doc.value().dump(), path);
}

std::string device_profile_to_json(const DeviceProfile& p) {
  nlohmann::ordered_json j;
  j["schema_version"] = kSchemaVersion;
  j["name"] = p.name;
  j["description"] = p.description;
  j["peak_tflops"] = {{"fp32", p.peak_fp32_flops / kTera}, {"tf32", p.peak_tf32_flops / kTera},
                      {"fp16", p.peak_fp16_flops / kTera}, {"bf16", p.peak_bf16_flops / kTera},
                      {"fp8", p.peak_fp8_flops / kTera}};
  j["sm_count"] = p.sm_count;
  j["communication_sms"] = p.communication_sms;
  j["hbm"] = {{"capacity_gib", p.hbm_capacity.count() >> 30},
              {"bandwidth_gbyte_per_s", static_cast<double>(p.hbm_bandwidth.count()) / 1e9}};
  j["efficiency"] = {{"compute", p.compute_efficiency},
                     {"hbm", p.hbm_efficiency},
                     {"embedding_hbm", p.embedding_hbm_efficiency}};
  j["gemm"] = {{"k_half", p.gemm_k_half},
               {"unaligned_efficiency", p.gemm_unaligned_efficiency},
               {"tile_m", p.gemm_tile_m},
               {"tile_n", p.gemm_tile_n}};
  j["kernel_launch_ns"] = static_cast<double>(p.kernel_launch.count_ps()) / 1e3;
  j["embedding_row_access_ns"] = p.embedding_row_access_ns;
  j["embedding_backward_overhead_ns"] = p.embedding_backward_overhead_ns;
  j["host_to_device_gbyte_per_s"] = static_cast<double>(p.host_to_device_bandwidth.count()) / 1e9;
  return j.dump(2) + "\n";
}

}  // namespace zx::models
