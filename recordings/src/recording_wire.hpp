// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The result of a recording read, passed from the reading child process to its parent
// (hdf5_guard.cpp), so that the parent never runs libhdf5 on the file's bytes: libhdf5 1.10 is
// not even deterministic on corrupt files (the byte-flip test sees the same flip crash in one
// run and not in the next). Private to the recordings library.

#include <string>
#include <string_view>

#include "mmaemu/recordings/recording.hpp"

namespace mmaemu::recordings::detail {

// A flat little-endian encoding of every field of `rec`.
std::string encode_recording(const Recording& rec);

// Decodes what encode_recording wrote. The bytes come from a child that parsed hostile data,
// so they are checked like input: every length against what is left, every format name
// parsed, each batch through check_batch. Throws RecordingError "<name>: ..." otherwise.
Recording decode_recording(std::string_view bytes, const std::string& name);

} // namespace mmaemu::recordings::detail
