// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: key files (reports::private_key_from_pem and public_key_from_pem, the
// parse behind MMAEMU_SIGNING_KEY and every trusted *.pub) on arbitrary bytes.
//
// Findings: a crash, a sanitizer report, an exception other than SigningError (or
// std::bad_alloc); a key accepted from text that is not exactly one PEM block
// (single_pem_block refuses it, or it holds a second "-----BEGIN "); a public key that does
// not read back from its own PEM to the same fingerprint.

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>

#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/pem_block.hpp"

namespace {

using mmaemu::reports::Key;
using mmaemu::reports::SigningError;

// The input is one key file: it may be accepted only as exactly one PEM block.
void accepted(std::string_view text, const Key& key) {
  try {
    (void)mmaemu::reports::single_pem_block(text, "fuzz");
  } catch (const SigningError&) {
    __builtin_trap();
  }
  const auto first = text.find("-----BEGIN ");
  if (first == std::string_view::npos || text.find("-----BEGIN ", first + 1) != text.npos)
    __builtin_trap();
  const std::string fp = mmaemu::reports::fingerprint(key);
  const Key again =
      mmaemu::reports::public_key_from_pem(mmaemu::reports::public_key_pem(key), "again");
  if (mmaemu::reports::fingerprint(again) != fp)
    __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    try {
      accepted(text, mmaemu::reports::private_key_from_pem(text, "fuzz.pem"));
    } catch (const SigningError&) {
    }
    try {
      accepted(text, mmaemu::reports::public_key_from_pem(text, "fuzz.pub"));
    } catch (const SigningError&) {
    }
  } catch (const std::bad_alloc&) {
  }
  return 0;
}
