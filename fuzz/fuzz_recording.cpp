// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the HDF5 recording reader (recordings::read_recording_image, what
// read_recording does after reading the file) on arbitrary bytes as a file image.
//
// A recording that reads has its gemm_call descriptions parsed as a replay parses them
// (harness::parse_gemm_calls, with the budget of a file of the input's size), so that the
// budgets of docs/recordings.md, the reader's and the descriptions', are both fuzzed.
//
// The reader documents that it throws RecordingError and nothing else for any bytes; anything
// else escaping, a crash in this process or a sanitizer report in it is a finding. So is a
// recording that reads but whose batches fail check_batch (the reader promises consistency).
//
// Guard: ReadGuard::child_then_parent. libhdf5 1.10 itself crashes and loops on corrupt files
// (the byte-flip test sees dozens of crashes in 688 reads; this target found a loop in its
// global-heap code), which is why read_recording parses in a forked child and takes back only
// the child's result. Fuzzing the in-process parser would report libhdf5's crashes, which are
// not ours and which the guard turns into RecordingErrors. The production mode
// (child_process) would hide the reader from libFuzzer, since it runs in the child only, so
// child_then_parent also parses in this process after the child ended cleanly (a read or a
// RecordingError): libFuzzer sees the reader's coverage, and libhdf5 runs here only on bytes
// it has just survived. The residual risk: libhdf5 is not deterministic on corrupt files
// (about 1 flip in 700 changes outcome between runs), so a crash here can still be
// libhdf5's; reproduce a finding with read_recording (child_process) before calling it ours.
//
// The child resets the crash signals and the sanitizer death callback (a libhdf5 crash in it
// writes no crash artifact), but libFuzzer's malloc hook still runs there: a corrupt size
// that makes libhdf5 malloc more than -malloc_limit_mb would write an "oom-" artifact from
// the child. LLVMFuzzerInitialize therefore raises the default malloc limit (an explicit
// -malloc_limit_mb on the command line wins); -rss_limit_mb still bounds this process.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "mmaemu/harness/gemm_call.hpp"
#include "mmaemu/recordings/recording.hpp"

// libhdf5 1.10 leaks on its own error paths for corrupt files (an object header it failed to
// load in H5Oopen, for one); those leaks are not ours and would end every run within
// seconds. Our handles are all closed by RAII; memory that libhdf5 hands us (variable-length
// strings) is freed by H5free_memory / H5Dvlen_reclaim. The suppression matches any leak
// allocated with libhdf5 on the stack, so it also hides a string we would fail to free:
// the unit tests (ASan build, label "unit") read good files, where nothing is suppressed.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libhdf5_serial.so\nleak:libhdf5.so\n";
}

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  for (int i = 0; i < *argc; ++i) {
    if (std::strncmp((*argv)[i], "-malloc_limit_mb=", 17) == 0)
      return 0;
  }
  static std::vector<char*> args;
  static char limit[] = "-malloc_limit_mb=1048576";
  args.assign(*argv, *argv + *argc);
  args.push_back(limit);
  args.push_back(nullptr);
  *argc += 1;
  *argv = args.data();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mmaemu::recordings;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    // Inputs of a few KiB parse in milliseconds; 2 s cuts libhdf5's loops on corrupt global
    // heaps short (the default, 20 s, would make every such input a 20 s stall).
    const Recording rec =
        read_recording_image(bytes, "fuzz-input.h5", ReadGuard::child_then_parent, 2.0);
    for (const MmaBatch& b : rec.mma)
      check_batch(b, "fuzz-input.h5 (after a successful read)");
    // What a replay does next: every gemm_call description parsed against the budget of a
    // file of this size (mmaemu/recordings/budget.hpp); a refusal names the file too.
    for (const GemmCallBatch& b : rec.gemm_call) {
      try {
        (void)mmaemu::harness::parse_gemm_calls(b, "fuzz-input.h5", size);
      } catch (const mmaemu::harness::GemmCallError& e) {
        if (std::strncmp(e.what(), "fuzz-input.h5", 13) != 0)
          std::abort();
      }
    }
  } catch (const RecordingError& e) {
    // An error naming the input is the expected outcome for most inputs; one that does not
    // name it breaks the reader's contract.
    if (std::strncmp(e.what(), "fuzz-input.h5", 13) != 0)
      std::abort();
  }
  return 0;
}
