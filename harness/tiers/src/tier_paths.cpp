// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_paths.hpp"

#include <stdexcept>

#include "mmaemu/support/text.hpp"

namespace mmaemu::harness {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kOut = "{out}";

// The components of a '/'-separated relative path (empty ones, from "a//b" or a trailing
// '/', included: the rule refuses them).
template <class Fn> void each_component(std::string_view s, Fn fn) {
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = s.find('/', start);
    fn(s.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos)
      return;
    start = slash + 1;
  }
}

fs::path normal_absolute(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(p), ec);
  if (ec)
    c = fs::absolute(p).lexically_normal();
  return c;
}

} // namespace

std::optional<std::string> tier_path_problem(std::string_view value, TierPathRoot root) {
  if (value.empty())
    return "is empty";
  if (value.size() > kMaxTierPathBytes)
    return "is longer than " + std::to_string(kMaxTierPathBytes) + " bytes";
  for (char c : value) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      return "holds a control character";
  }
  if (value.front() == '/')
    return "is an absolute path: name a file inside the tier's tree" +
           std::string(root == TierPathRoot::out_or_tree ? " or {out}/..." : "");
  bool first = true;
  std::optional<std::string> bad;
  each_component(value, [&](std::string_view c) {
    if (bad)
      return;
    const bool out_prefix = first && c == kOut && root == TierPathRoot::out_or_tree;
    if (c == "..")
      bad = "has a '..' component: it must stay inside the tier's tree" +
            std::string(root == TierPathRoot::out_or_tree ? " or {out}" : "");
    else if (c.empty())
      bad = "has an empty component ('//' or a trailing '/'): '{out}//x' would name the "
            "absolute path /x";
    else if (!out_prefix && c.find(kOut) != std::string_view::npos)
      bad = "uses {out} other than as its first component";
    else if (!out_prefix &&
             (c.find('{') != std::string_view::npos || c.find('}') != std::string_view::npos))
      bad = "holds '{' or '}' (only {out} is a placeholder)";
    first = false;
  });
  if (!bad && value == kOut)
    bad = "names the output folder itself, not a file in it";
  return bad;
}

bool path_within(const fs::path& p, const fs::path& root) {
  const fs::path a = normal_absolute(p);
  const fs::path r = normal_absolute(root);
  auto ai = a.begin();
  for (auto ri = r.begin(); ri != r.end(); ++ri, ++ai) {
    if (ri->empty() && std::next(ri) == r.end())
      return true; // a trailing separator
    if (ai == a.end() || *ai != *ri)
      return false;
  }
  return true;
}

fs::path resolve_tier_path(std::string_view value, const fs::path& tree, const fs::path& out) {
  const bool in_out = value.substr(0, kOut.size() + 1) == "{out}/";
  if (const auto why =
          tier_path_problem(value, in_out ? TierPathRoot::out_or_tree : TierPathRoot::tree))
    throw std::invalid_argument("'" + support::printable(value, 256) + "' " + *why);
  const fs::path root = in_out ? out : tree;
  const fs::path p = root / std::string(in_out ? value.substr(kOut.size() + 1) : value);
  if (!path_within(p, root)) {
    throw std::invalid_argument("'" + support::printable(value, 256) +
                                "' leads outside its folder " +
                                support::printable(root.string(), 256) + " (a symlink)");
  }
  return p;
}

} // namespace mmaemu::harness
