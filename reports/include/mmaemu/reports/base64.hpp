// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Standard base64 (RFC 4648, with '=' padding), strict on decode.

#include <optional>
#include <string>
#include <string_view>

namespace mmaemu::reports {

std::string base64_encode(std::string_view bytes);

// Nothing if `text` is not canonical padded base64 (length a multiple of 4, alphabet,
// padding only at the end).
std::optional<std::string> base64_decode(std::string_view text);

} // namespace mmaemu::reports
