// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the validation-log verifier (reports::verify_log_bytes, the parse and
// verify behind `mmaemu report verify`) on arbitrary bytes, against one fixed trusted key.
//
// Input: the log's bytes, optionally followed by the separator "\0SIG\0" and the text of its
// .sig file (no separator: the log has no signature file). A NUL byte never occurs in a JSON
// log, so a valid log and its signature are one input (see corpus/verify_log/).
//
// The trusted key is the public half of a throwaway key that signed the seed logs; it is
// corpus/verify_log/trusted-key.pub. Its private half was deleted after signing and is
// nowhere in the repository.
//
// The verifier documents that it throws nothing but std::bad_alloc; anything else escaping,
// a crash or a sanitizer report is a finding. So is a result that is both OK and an ERROR.

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/trusted_keys.hpp"
#include "mmaemu/reports/verify_log.hpp"

namespace {

constexpr std::string_view kTrustedKeyPem =
    "-----BEGIN PUBLIC KEY-----\n"
    "MCowBQYDK2VwAyEAdVCYpXoGlakBhNgNNNJ5HdY/v4GWN90iIX+81p7SW5o=\n"
    "-----END PUBLIC KEY-----\n";

constexpr std::string_view kSeparator("\0SIG\0", 5);

const mmaemu::reports::TrustedKeys& trusted_keys() {
  static const mmaemu::reports::TrustedKeys keys = [] {
    mmaemu::reports::TrustedKeys k;
    k.dir = "fuzz/corpus/verify_log";
    const mmaemu::reports::Key key =
        mmaemu::reports::public_key_from_pem(kTrustedKeyPem, "fuzz trusted key");
    k.by_fingerprint.emplace(mmaemu::reports::fingerprint(key),
                             mmaemu::reports::TrustedKey{k.dir / "trusted-key.pub", key});
    return k;
  }();
  return keys;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view log = input;
  std::optional<std::string> signature;
  if (const auto at = input.find(kSeparator); at != std::string_view::npos) {
    log = input.substr(0, at);
    signature = std::string(input.substr(at + kSeparator.size()));
  }
  try {
    const auto v = mmaemu::reports::verify_log_bytes(log, signature, trusted_keys(), "fuzz.json");
    if (v.ok && v.error)
      __builtin_trap();
    if (v.ok && !signature)
      __builtin_trap(); // a log without a signature file never verifies
  } catch (const std::bad_alloc&) {
    // Documented: out of memory is the only exception verify_log_bytes lets through.
  }
  return 0;
}
