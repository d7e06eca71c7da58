// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The lock of a schema build kept between campaigns (<build>/mutants-schema): shards of one
// campaign (Slurm array tasks, several `mutants run --shard k/N` at once) share that build.
// Whoever changes the copy or builds it holds the lock exclusively; a campaign that runs its
// mutants holds it shared, so that nobody rewrites the binaries under its tests, while other
// shards of the same selection run theirs at the same time.

#include <filesystem>
#include <string>

namespace mmaemu::mutants::detail {

class SchemaLock {
public:
  // Opens (creates) `path`; takes no lock yet. Throws WorkspaceError.
  explicit SchemaLock(const std::filesystem::path& path);
  ~SchemaLock();
  SchemaLock(const SchemaLock&) = delete;
  SchemaLock& operator=(const SchemaLock&) = delete;

  void exclusive(); // blocks until no one else holds the lock
  void shared();    // blocks while someone holds it exclusively (a conversion is not atomic)

private:
  int fd_ = -1;
  std::filesystem::path path_;
};

// The stamp that says which tree the schema build holds, written after a successful build.
std::string read_schema_stamp(const std::filesystem::path& schema_dir);
void write_schema_stamp(const std::filesystem::path& schema_dir, const std::string& stamp);
void remove_schema_stamp(const std::filesystem::path& schema_dir);

} // namespace mmaemu::mutants::detail
