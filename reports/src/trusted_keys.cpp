// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/trusted_keys.hpp"

#include <algorithm>
#include <vector>

#include "mmaemu/support/text.hpp"

namespace mmaemu::reports {

namespace fs = std::filesystem;

TrustedKeys load_trusted_keys(const fs::path& dir) {
  const std::string shown = support::printable(dir.string(), 256);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw SigningError("--keys: '" + shown + "' is not a folder of trusted .pub keys");
  }
  TrustedKeys keys;
  keys.dir = dir;
  std::vector<fs::path> files;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    // Every *.pub that is not a folder: a FIFO or a device named *.pub is refused by
    // load_public_key, not skipped in silence.
    if (it->path().extension() == ".pub" && !it->is_directory(type_ec)) {
      files.push_back(it->path());
    }
  }
  if (ec) {
    throw SigningError("--keys: '" + shown + "' cannot be read (" + ec.message() + ")");
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
