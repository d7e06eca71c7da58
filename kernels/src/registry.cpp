// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/registry.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/warnings.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/module_loader.hpp"

namespace mmaemu::kernels {

namespace {

bool env_is_one(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

bool contains(std::span<const int> xs, int x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

// A by-design reason not to run `spec` for this preset and format pair on `dev`, or empty.
// A preset of null skips the preset and format checks.
std::string design_skip(const KernelSpec& spec, const Preset* preset, model::FormatPair fmt,
                        const driver::Device& dev, bool by_name) {
  const std::string k = "cuda:" + std::string(spec.name);
  if (preset) {
    if (preset->name != spec.preset || preset->maturity == Maturity::custom) {
      return k + " serves only the shipped preset '" + std::string(spec.preset) +
             "'; this call's preset is '" + preset->name + "'";
    }
    if (fmt.a != Format::e4m3 || fmt.b != Format::e4m3)
      return k + " serves only E4M3 x E4M3; E5M2 and mixed pairs run on the reference";
  }
  if (dev.cc < spec.min_cc) {
    return k + " needs compute capability " + std::to_string(spec.min_cc / 10) + "." +
           std::to_string(spec.min_cc % 10) + " or higher; device " + std::to_string(dev.ordinal) +
           " (" + dev.name + ") is " + std::to_string(dev.cc / 10) + "." +
           std::to_string(dev.cc % 10);
  }
  if (!spec_runs_on(spec, dev.cc)) {
    std::string archs;
    for (int x : spec.sass)
      archs += (archs.empty() ? "sm_" : ", sm_") + std::to_string(x);
    return k + " has SASS for " + archs +
           (spec.ptx != 0 ? " and PTX compute_" + std::to_string(spec.ptx) : " only (no PTX)") +
           "; device " + std::to_string(dev.ordinal) + " (" + dev.name + ") is " +
           std::to_string(dev.cc / 10) + "." + std::to_string(dev.cc % 10) +
           " (NVRTC does not extend a kernel's architectures)";
  }
  if (spec.dynamic_smem > dev.smem_optin) {
    return k + " needs " + std::to_string(spec.dynamic_smem) +
           " B of dynamic shared memory; the device's opt-in limit is " +
           std::to_string(dev.smem_optin) + " B";
  }
  if (spec.gated && !by_name && !contains(spec.validated_on, dev.cc) &&
      !env_is_one("MMAEMU_ALLOW_GATED_KERNELS")) {
    return k + " is gated and not validated on compute capability " + std::to_string(dev.cc) +
           " (MMAEMU_ALLOW_GATED_KERNELS=1 lifts this)";
  }
  return {};
}

KernelStatus examine(const KernelSpec& spec, const driver::Device& dev, const Preset* preset,
                     model::FormatPair fmt, bool by_name, bool force,
                     const LoadedModule** loaded_out = nullptr) {
  KernelStatus s;
  s.kernel = spec.name;
  s.backend = "cuda:" + std::string(spec.name);
  s.preset = spec.preset;
  s.device = dev.ordinal;
  s.device_name = dev.name;
  s.cc = dev.cc;
  s.validated_here = contains(spec.validated_on, dev.cc);
  s.skip = design_skip(spec, preset, fmt, dev, by_name);
  if (!s.skip.empty())
    return s;
  const LoadedModule* loaded = nullptr;
  try {
    loaded = &load_module(spec, dev);
  } catch (const std::exception& e) {
    s.failure = e.what();
    return s;
  }
  s.source = loaded->source;
  s.image_sha256 = loaded->image_sha256;
  s.fatbin_reason = loaded->fatbin_reason;
  s.gates = run_gates(spec, *loaded, dev, force);
  s.tested = true;
  s.available = true;
  for (const auto& g : s.gates) {
    if (!g.passed) {
      s.available = false;
      s.failure = s.backend + ": gate " + g.gate + " failed: " + g.detail;
      break;
    }
  }
  if (loaded_out)
    *loaded_out = loaded;
  return s;
}

ChainFn chain_of(const KernelSpec& spec, const LoadedModule& loaded, const driver::Device& dev) {
  return [&spec, &loaded, &dev](const model::GemmOperands& op, std::size_t k0, std::size_t k1,
                                std::uint32_t* out, std::size_t ldo) {
    if (op.fmt.a != Format::e4m3 || op.fmt.b != Format::e4m3) {
      throw ValueError("cuda:" + std::string(spec.name) +
                       ": the kernels take E4M3 x E4M3 codes only");
    }
    if (k0 > k1 || k1 > op.K) {
      throw ValueError("cuda:" + std::string(spec.name) + ": the k range [" + std::to_string(k0) +
                       ", " + std::to_string(k1) + ") is outside [0, " + std::to_string(op.K) +
                       "]");
    }
    std::vector<float> c(op.M * op.N);
    run_kernel(spec, loaded, dev, op.a + k0, op.lda, op.b + k0, op.ldb,
               static_cast<std::int64_t>(op.M), static_cast<std::int64_t>(op.N),
               static_cast<std::int64_t>(k1 - k0), c.data());
    for (std::size_t m = 0; m < op.M; ++m)
      std::memcpy(out + m * ldo, c.data() + m * op.N, op.N * 4);
  };
}

} // namespace

std::string cuda_unavailable_reason() {
  if (driver::cuda_disabled())
    return "CUDA is disabled (MMAEMU_DISABLE_CUDA=1)";
  std::string why;
  if (!driver::try_api(&why))
    return "no CUDA driver: " + why;
  if (driver::visible_device_count() == 0)
    return "no CUDA device is visible";
  return {};
}

std::vector<KernelStatus> kernel_statuses(int ordinal, const std::vector<std::string>& kernels,
                                          bool force) {
  std::vector<const KernelSpec*> specs;
  if (kernels.empty()) {
    for (const auto& s : kernel_specs())
      specs.push_back(&s);
  } else {
    for (const auto& name : kernels) {
      const KernelSpec* s = find_kernel_spec(name);
      if (!s) {
        throw ValueError("kernel '" + name + "' is not a kernel of this build (" +
                         kernel_names_text() + ")");
      }
      specs.push_back(s);
    }
  }
  std::vector<KernelStatus> out;
  const std::string why = cuda_unavailable_reason();
  for (const KernelSpec* spec : specs) {
    if (!why.empty() || ordinal >= driver::visible_device_count()) {
      KernelStatus s;
      s.kernel = spec->name;
      s.backend = "cuda:" + std::string(spec->name);
      s.preset = spec->preset;
      s.failure = !why.empty() ? why
                               : "device " + std::to_string(ordinal) + " does not exist (" +
                                     std::to_string(driver::visible_device_count()) + " visible)";
      out.push_back(s);
      continue;
    }
    out.push_back(examine(*spec, driver::device(ordinal), nullptr, {}, true, force));
  }
  return out;
}

ChainBackend select_backend_with_cuda(const BackendRequest& request) {
  const std::string name = effective_backend_name(request.requested);
  const bool is_cuda = name == "cuda" || name.rfind("cuda:", 0) == 0;
  if (name != "auto" && !is_cuda)
    return reference_only_backend({name, request.preset, request.fmt}); // reference or error
  const KernelSpec* named = nullptr;
  if (name.rfind("cuda:", 0) == 0) {
    const std::string k = name.substr(5);
    if (k.empty()) {
      throw ValueError("backend '" + name + "': no kernel after 'cuda:' (" + kernel_names_text() +
                       "), or 'cuda' for any");
    }
    named = find_kernel_spec(k);
    if (!named) {
      if (const std::string why = absent_kernel_reason(k);
          !why.empty() && std::find(known_kernel_names().begin(), known_kernel_names().end(), k) !=
                              known_kernel_names().end()) {
        throw BackendUnavailableError("backend '" + name + "' is unavailable: " + why);
      }
      reference_only_backend({name, request.preset, request.fmt}); // throws ValueError
    }
  }
  const std::string why = cuda_unavailable_reason();
  if (!why.empty()) {
    if (is_cuda)
      throw BackendUnavailableError("backend '" + name + "' is unavailable: " + why);
    ChainBackend r;
    r.fallbacks.push_back("cuda: " + why + "; the reference model runs");
    return r;
  }
  if (!request.preset) {
    ChainBackend r;
    r.name = name;
    return r;
  }
  const driver::Device& dev = driver::device(0);
  std::vector<const KernelSpec*> candidates;
  if (named) {
    candidates.push_back(named);
  } else {
    // A kernel serves only its own preset: the orders of the two presets never mix.
    for (const auto& s : kernel_specs()) {
      if (s.preset == request.preset->name)
        candidates.push_back(&s);
    }
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [](const KernelSpec* x, const KernelSpec* y) { return x->priority > y->priority; });
  }
  std::vector<std::string> notes, failures;
  for (const KernelSpec* spec : candidates) {
    const LoadedModule* loaded = nullptr;
    const KernelStatus s =
        examine(*spec, dev, request.preset, request.fmt, named != nullptr, false, &loaded);
    if (!s.skip.empty()) {
      if (named)
        throw BackendUnavailableError("backend '" + name + "' is unavailable: " + s.skip);
      notes.push_back(s.skip);
      continue;
    }
    if (!s.available) {
      failures.push_back(s.failure);
      notes.push_back(s.failure);
      continue;
    }
    ChainBackend r;
    r.name = s.backend;
    if (!failures.empty()) {
      std::string joined;
      for (const auto& f : failures)
        joined += (joined.empty() ? "" : "; ") + f;
      warn_once(WarningClass::backend_fallback,
                "device " + std::to_string(dev.ordinal) + ": " + joined,
                joined + "; using " + r.name);
    }
    if (s.source == "nvrtc") {
      warn_once(WarningClass::backend_fallback,
                "device " + std::to_string(dev.ordinal) + ": nvrtc " + s.backend,
                s.backend + " was compiled with NVRTC: its fatbin is unusable (" + s.fatbin_reason +
                    ")");
      notes.push_back(s.backend + ": compiled with NVRTC (" + s.fatbin_reason + ")");
    }
    r.fallbacks = notes;
    r.chain = chain_of(*spec, *loaded, dev);
    return r;
  }
  std::string joined;
  for (const auto& f : failures)
    joined += (joined.empty() ? "" : "; ") + f;
  if (is_cuda) {
    throw BackendUnavailableError(
        "backend '" + name + "' is unavailable: " +
        (joined.empty() ? "no kernel serves preset '" + request.preset->name + "'" : joined));
  }
  if (!failures.empty()) {
    warn_once(WarningClass::backend_fallback,
              "device " + std::to_string(dev.ordinal) + ": " + joined,
              joined + "; using the reference backend");
  }
  ChainBackend r;
  r.fallbacks = notes;
  return r;
}

void install_cuda_backend() {
  set_backend_selector(select_backend_with_cuda);
}

} // namespace mmaemu::kernels
