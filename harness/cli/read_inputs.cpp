// SPDX-License-Identifier: BSD-2-Clause
#include "read_inputs.hpp"

#include <cstdlib>

#include "mmaemu/harness/tier_layout.hpp"

namespace mmaemu::cli {

namespace fs = std::filesystem;

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec))
    return out;
  constexpr std::size_t kMax = 100000; // a bound on the work, far above any real folder
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end && out.size() < kMax; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2))
      out.push_back(it->path());
  }
  return out;
}

const std::vector<fs::path>& standard_inputs() {
  static const std::vector<fs::path> inputs = [] {
    std::vector<fs::path> v;
    if (const char* k = std::getenv("MMAEMU_SIGNING_KEY"); k && *k)
      v.emplace_back(k);
    const harness::Layout l = harness::discover_layout();
    for (const auto& d : {l.tiers_dir, l.keys_dir, l.recordings_dir, l.publish_root}) {
      const auto f = files_under(d);
      v.insert(v.end(), f.begin(), f.end());
    }
    if (l.source_dir)
      v.push_back(*l.source_dir / "mutants" / "catalogue.json");
    return v;
  }();
  return inputs;
}

std::vector<fs::path> joined(std::vector<fs::path> a, const std::vector<fs::path>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

} // namespace mmaemu::cli
