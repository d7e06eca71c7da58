// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A key file holds exactly one key and nothing else: the one PEM block of its text, checked
// before OpenSSL sees it (OpenSSL reads the first block and ignores whatever follows, so a
// file of two keys, or a key with junk after it, would sign with the first).

#include <string>
#include <string_view>

namespace mmaemu::reports {

struct PemBlock {
  std::string label; // "PRIVATE KEY", "PUBLIC KEY", ...
  std::string der;   // the decoded body: one DER SEQUENCE, nothing after it
};

// The one block of `text`: optional blank or '#' comment lines (a licence header), a "-----BEGIN
// <label>-----" line, base64 lines of at most 76 characters (no headers), the "-----END
// <label>-----" line of the same label, optional whitespace; lines end in LF or CRLF. Its body must
// be canonical base64 of one DER SEQUENCE whose length is the whole body. Throws SigningError
// "<where>: ..." naming what is wrong: no PEM block, several blocks ("holds N PEM blocks"), data
// before or after the block, a malformed line, or a body that is not one DER object.
PemBlock single_pem_block(std::string_view text, std::string_view where);

} // namespace mmaemu::reports
