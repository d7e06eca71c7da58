// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// What the loader tests share: environment changes undone after each test, the fake
// libraries' counters, and fatbin folders written for a test.

#include <dlfcn.h>
#include <stdlib.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/kernels/fatbin_manifest.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/support/digest.hpp"
#include "temp_dir.hpp"

namespace mmaemu::testing {

// Sets and unsets variables; the destructor restores what was there.
class EnvGuard {
public:
  EnvGuard() = default;
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;
  ~EnvGuard() {
    for (const auto& [name, old] : saved_) {
      if (old)
        ::setenv(name.c_str(), old->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  }
  void set(const std::string& name, const std::string& value) {
    remember(name);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string& name) {
    remember(name);
    ::unsetenv(name.c_str());
  }

private:
  void remember(const std::string& name) {
    if (saved_.count(name))
      return;
    const char* v = std::getenv(name.c_str());
    saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

// A function of an already loaded fake library (the driver or NVRTC that the loader opened).
template <class Fn> Fn fake_symbol(const char* library, const char* symbol) {
  void* h = ::dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return nullptr;
  auto f = reinterpret_cast<Fn>(::dlsym(h, symbol));
  ::dlclose(h); // drops only the reference taken here
  return f;
}

inline int fake_cuda_counter(const char* symbol) {
  auto f = fake_symbol<int (*)()>(MMAEMU_FAKE_CUDA_PATH, symbol);
  return f ? f() : -1;
}

inline int fake_nvrtc_compiles() {
  auto f = fake_symbol<int (*)()>(MMAEMU_FAKE_NVRTC_PATH, "mmaemu_fake_nvrtc_compiles");
  return f ? f() : 0; // not loaded yet: nothing compiled
}

// The image the fake driver accepts for a test fatbin of `module`.
inline std::string fake_fatbin_image(const std::string& module) {
  return "MMAEMU-FAKE-IMAGE fatbin " + module + std::string(1, '\0');
}

// Writes <dir>/<module>.fatbin for every kernel of kernel_specs() and a manifest for them
// (the specs' architectures, the embedded sources' hash); returns the manifest written.
inline kernels::FatbinManifest write_fatbins(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  kernels::FatbinManifest m;
  m.source_sha256 = kernels::sources_sha256();
  m.nvcc = "12.8.61";
  m.flags = {"-O3", "--fmad=false"};
  for (const kernels::KernelSpec& s : kernels::kernel_specs()) {
    std::string module(s.source.substr(0, s.source.rfind('.')));
    const std::string image = fake_fatbin_image(module);
    spit(dir / (module + ".fatbin"), image);
    m.modules.push_back({module, module + ".fatbin", support::sha256_hex(image),
                         std::vector<int>(s.sass.begin(), s.sass.end()),
                         s.ptx != 0 ? std::optional<int>(s.ptx) : std::nullopt});
  }
  kernels::write_manifest(dir / "manifest.json", m);
  return m;
}

} // namespace mmaemu::testing
