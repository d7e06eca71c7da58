// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Opening what a user names as an input (a recording, a key, a log, a tier file, a text set):
// only regular files, never blocking on a FIFO or a device, never more than a stated size.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mmaemu::support {

// A file that cannot be used as an input or output: the message is one line that starts
// with the (escaped) path.
class FileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Limits on inputs, stated once (docs/testing.md lists them).
inline constexpr std::uint64_t kMaxRecordingBytes = 1ull << 30; // an HDF5 recording
inline constexpr std::uint64_t kMaxTextBytes = 64ull << 20;     // logs, tier files, text sets
inline constexpr std::uint64_t kMaxKeyBytes = 64ull << 10;      // PEM keys, signatures

// Checks, without opening it for reading and without blocking, that `path` names a regular
// file (after symlinks) of at most `max_bytes`; returns its size. `what` names the role in
// the message ("recording", "key", ...). Throws FileError.
std::uint64_t check_input_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                               std::string_view what);

// Reads a whole input file under the same rules (opened with O_NONBLOCK, checked with fstat
// on the open descriptor, so a FIFO swapped in after the check is still refused).
std::string read_input_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                            std::string_view what);

// The same, handing each piece of the file to `on_bytes` as it is read (to hash a file while
// reading it: digest.hpp, read_input_file_hashed).
std::string read_input_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                            std::string_view what,
                            const std::function<void(std::string_view)>& on_bytes);

// How many times this process has opened a file to read it whole (read_input_file,
// sha256_file): the tests that check that a replay reads each recording once count them.
std::uint64_t whole_file_reads();
// Counts one such read (called by the readers of this library).
void note_whole_file_read();

// Refuses an output path that names an existing non-regular file (device, FIFO, socket,
// folder) or a symlink to one, or the same file as one of `inputs`. Throws FileError.
void check_output_path(const std::filesystem::path& out,
                       const std::vector<std::filesystem::path>& inputs = {});

} // namespace mmaemu::support
