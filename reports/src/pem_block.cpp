// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/pem_block.hpp"

#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::reports {

namespace {

bool blank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// Blank lines and '#' comment lines (the SPDX header of a committed key): not key data.
bool comments_only(std::string_view s) {
  std::size_t pos = 0;
  while (pos < s.size()) {
    const std::size_t nl = s.find('\n', pos);
    const std::string_view line = s.substr(pos, nl == std::string_view::npos ? s.npos : nl - pos);
    if (!blank(line) && line.front() != '#')
      return false;
    if (nl == std::string_view::npos)
      break;
    pos = nl + 1;
  }
  return true;
}

std::size_t count_of(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// "<label>" of a "-----<word> <label>-----" line, or nothing.
bool boundary(std::string_view line, std::string_view word, std::string& label) {
  const std::string head = "-----" + std::string(word) + " ";
  if (line.size() < head.size() + 6 || line.substr(0, head.size()) != head ||
      line.substr(line.size() - 5) != "-----")
    return false;
  label = std::string(line.substr(head.size(), line.size() - head.size() - 5));
  for (char c : label) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' '))
      return false;
  }
  return !label.empty();
}

bool base64_line(std::string_view line) {
  if (line.empty() || line.size() > 76)
    return false;
  for (char c : line) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
          c == '/' || c == '='))
      return false;
  }
  return true;
}

// Whether `der` is exactly one DER SEQUENCE (tag, definite length, contents to the end).
bool one_der_sequence(std::string_view der) {
  if (der.size() < 2 || static_cast<unsigned char>(der[0]) != 0x30)
    return false;
  const auto b = static_cast<unsigned char>(der[1]);
  std::size_t len = 0, head = 2;
  if (b < 0x80) {
    len = b;
  } else {
    const std::size_t n = b & 0x7Fu;
    if (n == 0 || n > 4 || der.size() < 2 + n)
      return false;
    for (std::size_t i = 0; i < n; ++i)
      len = (len << 8) | static_cast<unsigned char>(der[2 + i]);
    head += n;
  }
  return head + len == der.size();
}

} // namespace

PemBlock single_pem_block(std::string_view text, std::string_view where) {
  const std::string w(where);
  const std::size_t begins = count_of(text, "-----BEGIN ");
  if (begins == 0)
    throw SigningError(w + ": holds no PEM block (-----BEGIN ...-----)");
  if (begins > 1) {
    throw SigningError(w + ": holds " + std::to_string(begins) +
                       " PEM blocks; a key file must hold exactly one key and nothing else");
  }
  const std::size_t start = text.find("-----BEGIN ");
  if (!comments_only(text.substr(0, start))) {
    throw SigningError(w + ": holds data before its PEM block; a key file must hold exactly one "
                           "key and nothing else");
  }
  // Line by line from the BEGIN line on, each without its LF (and CR).
  std::size_t end_of_block = std::string_view::npos;
  PemBlock out;
  std::string body;
  std::size_t pos = start;
  bool in_body = false;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    const std::size_t next = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view line =
        text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    pos = next;
    std::string label;
    if (!in_body) {
      if (!boundary(line, "BEGIN", label))
        throw SigningError(w + ": its BEGIN line is malformed");
      out.label = label;
      in_body = true;
      continue;
    }
    if (boundary(line, "END", label)) {
      if (label != out.label) {
        throw SigningError(w + ": its END line names " + support::printable(label) + ", not " +
                           out.label);
      }
      end_of_block = pos;
      break;
    }
    if (!base64_line(line)) {
      throw SigningError(w + ": line '" + support::printable(line) +
                         "' of its PEM block is not base64 (headers and other text are refused)");
    }
    body += line;
  }
  if (end_of_block == std::string_view::npos)
    throw SigningError(w + ": its PEM block has no END line (truncated?)");
  if (!blank(text.substr(end_of_block))) {
    throw SigningError(w + ": holds data after its PEM block; a key file must hold exactly one "
                           "key and nothing else");
  }
  const auto der = support::base64_decode(body);
  if (!der)
    throw SigningError(w + ": the body of its PEM block is not canonical base64");
  if (!one_der_sequence(*der)) {
    throw SigningError(w + ": the body of its PEM block is not exactly one DER object (data "
                           "after the key?)");
  }
  out.der = *der;
  return out;
}

} // namespace mmaemu::reports
