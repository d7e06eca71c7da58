// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/kernel_spec.hpp"

#include <array>

namespace mmaemu::kernels {

namespace {

// Release architectures (seed 000's table): SASS for each, PTX for the lowest.
constexpr std::array<int, 7> kSassFrom75{75, 80, 86, 89, 90, 100, 120};
constexpr std::array<int, 6> kSassFrom80{80, 86, 89, 90, 100, 120};
// Where T3 passed on hardware (seed 000, "Validation status"). sm_90 is not listed: the
// full device-independence suite has not run on an H100 or H200 yet.
constexpr std::array<int, 2> kValidatedAda{89, 120};
constexpr std::array<int, 2> kValidatedHopper{89, 120};
// The gated tensor-core kernels (seed 000): SASS only, no PTX (ptx 0), because their exactness
// depends on the tensor cores of the architecture they were compiled for. tc3 relies on the
// Ampere / Ada fp16 model (docs/backends.md), so only cc 8.0, 8.6 and 8.9 get SASS.
constexpr std::array<int, 3> kSassTc3{80, 86, 89};
// Empty until a GPU run validates a capability (the seeds' sm_89 validation was of the Python
// original's kernels, not of these sources): selection uses them only when asked for by name or
// with MMAEMU_ALLOW_GATED_KERNELS=1, and their gates still run.
constexpr std::span<const int> kValidatedNone{};

constexpr std::uint64_t kKMax1 = std::uint64_t{1} << 30;
constexpr std::uint64_t kKMax4 = std::uint64_t{1} << 24;

constexpr std::array<KernelSpec, 6> kSpecs{{
    {"tc3", "ada", "tc3.cu", "mmaemu_tc3_e4m3e4m3", 64, 64, 256, 0, 80, kSassTc3, 0, kKMax1, 40,
     true, kValidatedNone, 4},
    {"v9", "ada", "v9.cu", "mmaemu_v9_e4m3e4m3", 64, 64, 256, 0, 80, kSassFrom80, 0, kKMax1, 30,
     true, kValidatedNone, 4},
    {"v4", "ada", "v4.cu", "mmaemu_v4_e4m3e4m3", 128, 128, 256, 36864, 80, kSassFrom80, 80, kKMax4,
     20, false, kValidatedAda, 4},
    {"v1", "ada", "v1.cu", "mmaemu_v1_e4m3e4m3", 64, 64, 256, 0, 75, kSassFrom75, 75, kKMax1, 10,
     false, kValidatedAda, 4},
    {"h4", "hopper", "h4.cu", "mmaemu_h4_e4m3e4m3", 128, 128, 256, 73728, 80, kSassFrom80, 80,
     kKMax4, 20, false, kValidatedHopper, 4},
    {"h1", "hopper", "h1.cu", "mmaemu_h1_e4m3e4m3", 64, 64, 256, 0, 75, kSassFrom75, 75, kKMax1, 10,
     false, kValidatedHopper, 4},
}};

constexpr std::array<std::string_view, 6> kKnownNames{"v1", "v4", "v9", "tc3", "h1", "h4"};

} // namespace

bool spec_runs_on(const KernelSpec& spec, int cc) {
  for (int a : spec.sass) {
    if (a / 10 == cc / 10 && cc % 10 >= a % 10)
      return true;
  }
  return spec.ptx != 0 && cc >= spec.ptx;
}

std::span<const KernelSpec> kernel_specs() {
  return kSpecs;
}

const KernelSpec* find_kernel_spec(std::string_view name) {
  for (const auto& s : kSpecs) {
    if (s.name == name)
      return &s;
  }
  return nullptr;
}

std::span<const std::string_view> known_kernel_names() {
  return kKnownNames;
}

std::vector<std::string_view> absent_kernel_names() {
  std::vector<std::string_view> out;
  for (const auto name : kKnownNames) {
    if (!find_kernel_spec(name))
      out.push_back(name);
  }
  return out;
}

std::string absent_kernel_reason(std::string_view name) {
  if (find_kernel_spec(name))
    return {};
  // The only known names without a spec are the gated tensor-core designs (seed 000): their
  // sources are not part of the tree yet.
  return "the gated tensor-core design " + std::string(name) + " is not part of this build";
}

std::string kernel_names_text() {
  std::string built, absent;
  for (const auto name : kKnownNames) {
    std::string& to = find_kernel_spec(name) ? built : absent;
    to += (to.empty() ? "" : ", ") + std::string(name);
  }
  if (absent.empty())
    return built;
  return built + "; the gated tensor-core designs " + absent + " are not in this build";
}

} // namespace mmaemu::kernels
