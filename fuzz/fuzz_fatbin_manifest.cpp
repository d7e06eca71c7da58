// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the fatbin manifest parser (kernels::parse_manifest, behind the loader
// ladder and `mmaemu fatbin check`) on arbitrary bytes.
//
// parse_manifest documents that it throws ManifestError and nothing else (std::bad_alloc
// aside); anything else escaping, a crash or a sanitizer report is a finding. So is an
// accepted manifest that does not survive its own writer and parser unchanged, or a file
// name that could leave the fatbin folder.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string_view>

#include "mmaemu/kernels/fatbin_manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  mmaemu::kernels::FatbinManifest m;
  try {
    m = mmaemu::kernels::parse_manifest(text, "fuzz/manifest.json");
  } catch (const mmaemu::kernels::ManifestError&) {
    return 0;
  } catch (const std::bad_alloc&) {
    return 0;
  }
  for (const auto& e : m.modules) {
    if (e.file.empty() || e.file.find('/') != std::string::npos || e.file[0] == '.')
      std::abort(); // a file name that leaves the folder was accepted
  }
  const std::string again = mmaemu::kernels::manifest_to_json(m);
  const auto m2 = mmaemu::kernels::parse_manifest(again, "fuzz/again.json");
  if (mmaemu::kernels::manifest_to_json(m2) != again)
    std::abort(); // not a fixed point of write + parse
  return 0;
}
