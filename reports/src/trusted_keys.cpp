// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/trusted_keys.hpp"

#include <algorithm>
#include <vector>

namespace mmaemu::reports {

namespace fs = std::filesystem;

TrustedKeys load_trusted_keys(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw SigningError("--keys: '" + dir.string() + "' is not a folder of trusted .pub keys");
  }
  TrustedKeys keys;
  keys.dir = dir;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".pub")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    Key k = load_public_key(f);
    const std::string fp = fingerprint(k);
    keys.by_fingerprint.emplace(fp, TrustedKey{f, std::move(k)});
  }
  return keys;
}

} // namespace mmaemu::reports
