// SPDX-License-Identifier: BSD-2-Clause
// The listing of a fatbin: its container's entries read from the bytes (the format nvcc -fatbin
// writes), the same listing as cuobjdump prints it or parsed from cuobjdump's output, and a
// listing compared with the architectures a KernelSpec asks for.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <regex>
#include <stdexcept>

#include "fatbin_build_internal.hpp"

namespace mmaemu::kernels {

using detail::compute;
using detail::sm;
using detail::split_lines;

namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::uint64_t kFatbinFlagCompressed = 0x2000u;     // LZ4 (CUDA 11-12)
constexpr std::uint64_t kFatbinFlagCompressedZstd = 0x8000u; // zstd (CUDA 12.8+)

template <typename T> T load_le(std::string_view bytes, std::size_t off) {
  T v{};
  std::memcpy(&v, bytes.data() + off, sizeof(T)); // x86-64 and aarch64: little-endian hosts
  return v;
}

} // namespace

std::vector<FatbinImageEntry> list_fatbin(std::string_view bytes) {
  std::vector<FatbinImageEntry> entries;
  std::size_t off = 0;
  auto fail = [](std::size_t at, const std::string& what) {
    throw std::runtime_error("not a fatbin: " + what + " at offset " + std::to_string(at));
  };
  while (off < bytes.size()) {
    // Zero padding after the last container ends the file.
    if (std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(off), bytes.end(),
                    [](char c) { return c == 0; }))
      break;
    if (bytes.size() - off < 16)
      fail(off, "truncated container header");
    if (load_le<std::uint32_t>(bytes, off) != kFatbinMagic)
      fail(off, "bad magic");
    const auto header = load_le<std::uint16_t>(bytes, off + 6);
    const auto body = load_le<std::uint64_t>(bytes, off + 8);
    if (header < 16 || body > bytes.size() - off - header)
      fail(off, "container size past the end of the file");
    std::size_t e = off + header;
    const std::size_t end = off + header + body;
    while (e < end) {
      if (end - e < 64)
        fail(e, "truncated entry header");
      const auto kind = load_le<std::uint16_t>(bytes, e);
      const auto ehs = load_le<std::uint32_t>(bytes, e + 4);
      const auto size = load_le<std::uint64_t>(bytes, e + 8);
      const auto arch = load_le<std::uint32_t>(bytes, e + 28);
      const auto flags = load_le<std::uint64_t>(bytes, e + 40);
      if (ehs < 64 || ehs > end - e || size > end - e - ehs)
        fail(e, "entry past the end of its container");
      if (kind != 1 && kind != 2)
        fail(e, "unknown entry kind " + std::to_string(kind));
      FatbinImageEntry fe;
      fe.kind = kind == 1 ? FatbinImageEntry::Kind::ptx : FatbinImageEntry::Kind::elf;
      fe.arch = static_cast<int>(arch);
      fe.size = size;
      fe.compressed = (flags & (kFatbinFlagCompressed | kFatbinFlagCompressedZstd)) != 0;
      entries.push_back(fe);
      e += ehs + size;
    }
    off = end;
  }
  if (entries.empty())
    throw std::runtime_error("not a fatbin: no entries");
  return entries;
}

std::string format_fatbin_listing(std::string_view module,
                                  const std::vector<FatbinImageEntry>& entries) {
  std::string out;
  char buf[256];
  int n = 0;
  for (const auto& e : entries) {
    if (e.kind != FatbinImageEntry::Kind::elf)
      continue;
    ++n;
    std::snprintf(buf, sizeof buf, "ELF file %4d: %.*s.%d.sm_%d.cubin\n", n,
                  static_cast<int>(module.size()), module.data(), n, e.arch);
    out += buf;
  }
  n = 0;
  for (const auto& e : entries) {
    if (e.kind != FatbinImageEntry::Kind::ptx)
      continue;
    ++n;
    std::snprintf(buf, sizeof buf, "PTX file %4d: %.*s.%d.sm_%d.ptx\n", n,
                  static_cast<int>(module.size()), module.data(), n, e.arch);
    out += buf;
  }
  return out;
}

std::vector<FatbinImageEntry> parse_cuobjdump_listing(std::string_view text) {
  static const std::regex line_re(
      R"(^(ELF|PTX) file\s+\d+:\s*\S*?\.sm_(\d+)[a-z]?\.(cubin|ptx)\s*$)");
  std::vector<FatbinImageEntry> out;
  for (const auto& line : split_lines(text)) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re))
      continue;
    FatbinImageEntry e;
    e.kind = m[1] == "ELF" ? FatbinImageEntry::Kind::elf : FatbinImageEntry::Kind::ptx;
    e.arch = std::stoi(m[2]);
    out.push_back(e);
  }
  return out;
}

std::vector<std::string> compare_listing(const std::vector<FatbinImageEntry>& listed,
                                         const std::vector<int>& sass, int ptx) {
  std::vector<std::string> problems;
  std::map<int, int> elf_count, ptx_count;
  for (const auto& e : listed)
    ++(e.kind == FatbinImageEntry::Kind::elf ? elf_count : ptx_count)[e.arch];
  for (int a : sass) {
    if (elf_count.count(a) == 0)
      problems.push_back("missing SASS " + sm(a));
  }
  if (ptx != 0 && ptx_count.count(ptx) == 0)
    problems.push_back("missing PTX " + compute(ptx));
  for (const auto& [a, n] : elf_count) {
    if (std::find(sass.begin(), sass.end(), a) == sass.end())
      problems.push_back("unexpected SASS " + sm(a));
    else if (n > 1)
      problems.push_back("SASS " + sm(a) + " listed " + std::to_string(n) + " times");
  }
  for (const auto& [a, n] : ptx_count) {
    if (a != ptx)
      problems.push_back("unexpected PTX " + compute(a));
    else if (n > 1)
      problems.push_back("PTX " + compute(a) + " listed " + std::to_string(n) + " times");
  }
  return problems;
}

} // namespace mmaemu::kernels
