// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The check of the hex digests the kernels' files carry (a manifest's sha256, a verdict's
// key): exactly so many lower-case hex digits, the form sha256_hex writes.

#include <cstddef>
#include <string_view>

namespace mmaemu::kernels::detail {

// Lower-case hex of `digits` characters.
inline bool is_lower_hex(std::string_view s, std::size_t digits) {
  if (s.size() != digits)
    return false;
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  }
  return true;
}

} // namespace mmaemu::kernels::detail
