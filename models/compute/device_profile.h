// File: models/compute/device_profile.h
//
// What a GPU can do, as the compute cost models need it: peak dense FLOP/s
// per data type, HBM capacity and bandwidth, and the efficiency parameters
// that turn peaks into achieved rates. The built-in profiles carry vendor
// datasheet peaks and, for the A100, Meta's calibrated ZionEX efficiencies
// (MAD-Max); the others reuse those efficiencies as an assumption until
// kernels_ref measurements calibrate them. A profile is also a JSON file
// (schema_version 1, docs in docs/device_profiles.md); calibration writes files
// of the same schema and `--profile FILE` reads one.

#ifndef ZIONSIM_MODELS_COMPUTE_DEVICE_PROFILE_H_
#define ZIONSIM_MODELS_COMPUTE_DEVICE_PROFILE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"

namespace zx::models {

/// Element types of tensors and communication.
enum class DataType { kFp32, kTf32, kFp16, kBf16, kFp8 };

std::string_view to_string(DataType type);
/// Inverse of to_string ("fp32", "tf32", "fp16", "bf16", "fp8"); throws
/// std::invalid_argument listing the valid names.
DataType parse_data_type(std::string_view name);
/// Bytes per element in memory (tf32 is stored as fp32).
int element_bytes(DataType type);

struct DeviceProfile {
  std::string name;         ///< "a100-40gb"
  std::string description;  ///< one line, with the sources
  /// Peak dense tensor-core (or FP32 pipe) rates, FLOP/s; 0 when unsupported.
  double peak_fp32_flops = 0;
  double peak_tf32_flops = 0;
  double peak_fp16_flops = 0;
  double peak_bf16_flops = 0;
  double peak_fp8_flops = 0;
  int sm_count = 0;  ///< streaming multiprocessors: GEMM wave quantisation
  /// SMs one running communication kernel (an NCCL collective or send/recv)
  /// holds for its whole run, waiting for peers included: NCCL runs one
  /// thread block per channel and does not share those SMs with compute
  /// kernels. While k such kernels run on a GPU its compute kernels get
  /// sm_count - k x communication_sms of the SMs (models/execution/executor.h,
  /// SmContention). 0: communication takes no SMs from compute.
  int communication_sms = 0;
  sim::Bytes hbm_capacity;
  sim::BytesPerSecond hbm_bandwidth = sim::BytesPerSecond(1);

  /// Achieved / peak for large, well-shaped GEMMs.
  double compute_efficiency = 1.0;
  /// Achieved / peak HBM bandwidth for streaming kernels.
  double hbm_efficiency = 1.0;
  /// Achieved / peak HBM bandwidth for embedding row gathers and scatters
  /// (random rows of a few hundred bytes; on top of 32-byte sector rounding).
  double embedding_hbm_efficiency = 1.0;
  /// Time per random row access of an embedding kernel on top of moving the
  /// row's bytes, nanoseconds of the whole GPU (1 / the accesses it sustains
  /// per ns): the per-lookup work (index, address, a DRAM activation) that
  /// makes small rows cost more per byte than large ones. A forward lookup
  /// is one access, a backward one two (the row and its optimizer state).
  /// 0 in the built-ins (their embedding_hbm_efficiency folds it in);
  /// calibration fits it with embedding_hbm_efficiency from TBE runs of
  /// several row sizes.
  double embedding_row_access_ns = 0;
  /// Fixed time of a fused embedding backward beyond one kernel launch:
  /// sorting the lookups by row and finding the runs take several kernels
  /// (FBGEMM's and kernels_ref's backward alike), whatever the batch. 0 in
  /// the built-ins; calibration fits it as the backward runs' fixed time
  /// less the forward runs'.
  double embedding_backward_overhead_ns = 0;
  /// GEMM K dimension at which the main loop reaches half its efficiency
  /// (pipeline fill and epilogue overheads amortised over K).
  double gemm_k_half = 0;
  /// Rate of a GEMM with a dimension that is not a multiple of 16 bytes of
  /// its element type (gemm_aligned() in cost_models.h), relative to an
  /// aligned GEMM of the same shape: cuBLAS's fastest tensor-core kernels
  /// need 16-byte aligned leading dimensions (128-bit loads; on Hopper, TMA
  /// descriptors) and it falls back to narrower loads otherwise. 1: no
  /// penalty, the built-in profiles' value (their compute efficiencies are
  /// single figures for every shape, ZionEX's MAD-Max's 0.705 among them,
  /// which do not tell the two kinds apart); calibration measures it.
  double gemm_unaligned_efficiency = 1.0;
  /// Output tile of the GEMM kernels (wave quantisation).
  int gemm_tile_m = 128;
  int gemm_tile_n = 128;
  /// Fixed cost of one kernel launch on the GPU timeline.
  sim::Duration kernel_launch = sim::Duration::zero();
  /// Host-to-device copy bandwidth (pinned memory over the GPU's PCIe link).
  sim::BytesPerSecond host_to_device_bandwidth = sim::BytesPerSecond(1);

  /// Peak FLOP/s for `type`; throws std::invalid_argument if unsupported.
  double peak_flops(DataType type) const;
  /// Effective streaming and reduction bandwidth: HBM x hbm_efficiency.
  double effective_hbm_bytes_per_s() const;
};

/// The built-in profiles' names with one-line descriptions, sorted.
std::vector<std::pair<std::string, std::string>> device_profile_descriptions();

/// A built-in profile by name ("a100-40gb", "a100-80gb", "h100-sxm",
/// "h200"); throws zx::InputError listing the valid names.
DeviceProfile builtin_device_profile(std::string_view name);

/// Reads a profile file; throws zx::InputError naming the file and pointer.
/// A file may start from a built-in ("base": "a100-40gb") and override fields.
DeviceProfile load_device_profile(const std::string& path);
/// As load_device_profile, from text.
DeviceProfile parse_device_profile(std::string_view text, const std::string& source);
/// The profile as a file (schema_version 1) that parse_device_profile reads back.
std::string device_profile_to_json(const DeviceProfile& profile);

/// Throws zx::InputError listing every out-of-range field.
void validate(const DeviceProfile& profile, const std::string& source);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_COMPUTE_DEVICE_PROFILE_H_
