// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the public-set text importer (recordings::import_public_texts, what
// import_public_set does after reading the four files) on fuzzed texts.
//
// Input: two header bytes, then the a, b, c and d texts separated by NUL bytes (a NUL never
// occurs in a valid set, so a valid set is one input; see corpus/import_public/).
//   byte 0: bits 0-1 the GPU name (H100, Ada, B200, or "Fuzz1" that needs the preset
//           override), bit 2 a is E5M2, bit 3 b is E5M2, bit 4 --preset hopper
//   byte 1: K = 1 + byte % 32 (the layout's K is 32)
// Missing texts are empty.
//
// The importer documents that it throws ImportError and nothing else; anything else
// escaping, a crash or a sanitizer report is a finding. So is an imported batch that
// check_batch refuses (the importer must give what write_recording accepts), and an error
// message that contains a raw control character (echoes must be escaped).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "mmaemu/recordings/import_public.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mmaemu::recordings;
  if (size < 2)
    return 0;
  static const char* const kGpus[4] = {"H100", "Ada", "B200", "Fuzz1"};
  PublicSetTexts set;
  set.gpu = kGpus[data[0] & 3u];
  set.fmt_a = (data[0] & 4u) ? mmaemu::Format::e5m2 : mmaemu::Format::e4m3;
  set.fmt_b = (data[0] & 8u) ? mmaemu::Format::e5m2 : mmaemu::Format::e4m3;
  ImportOptions opt;
  if ((data[0] & 16u) || set.gpu == std::string("Fuzz1"))
    opt.preset = "hopper";
  opt.K = 1u + data[1] % 32u;
  const std::string fa = set.fmt_a == mmaemu::Format::e5m2 ? "E5M2" : "E4M3";
  const std::string fb = set.fmt_b == mmaemu::Format::e5m2 ? "E5M2" : "E4M3";
  set.a_path = "set/a_" + set.gpu + "_" + fa + ".txt";
  set.b_path = "set/b_" + set.gpu + "_" + fb + ".txt";
  set.c_path = "set/c_" + set.gpu + "_fp32.txt";
  set.d_path = "set/d_" + set.gpu + "_fp32.txt";

  std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  std::string* texts[4] = {&set.a, &set.b, &set.c, &set.d};
  for (std::string* t : texts) {
    const std::size_t nul = rest.find('\0');
    *t = std::string(rest.substr(0, nul));
    rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  }

  try {
    const Recording rec = import_public_texts(set, opt);
    if (rec.mma.size() != 1)
      std::abort();
    check_batch(rec.mma[0], "fuzz import"); // throws RecordingError: escapes, a finding
  } catch (const ImportError& e) {
    for (const char* p = e.what(); *p; ++p) {
      const auto c = static_cast<unsigned char>(*p);
      if (c < 0x20 || c == 0x7F)
        std::abort();
    }
    if (std::strncmp(e.what(), "set", 3) != 0)
      std::abort(); // names the file (or folder)
  }
  return 0;
}
