// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/recordings/budget.hpp"

#include <algorithm>
#include <limits>

#include "mmaemu/recordings/recording.hpp"

namespace mmaemu::recordings {

namespace {

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

} // namespace

std::uint64_t decoded_budget(std::uint64_t file_bytes) {
  return std::min(kMaxDecodedBytes, add(kDecodedBudgetBaseBytes, file_bytes));
}

std::uint64_t work_budget(std::uint64_t file_bytes) {
  return add(kWorkBudgetBaseBytes, mul(kWorkBudgetFactor, file_bytes));
}

std::uint64_t split_parts(const std::string& splitk) {
  if (splitk == "1")
    return 1;
  const auto comma = splitk.find(',');
  const std::string s = splitk.substr(0, comma);
  if (comma == std::string::npos || s.empty() || s.size() > 9 ||
      s.find_first_not_of("0123456789") != std::string::npos) {
    return kAssumedAutoSplitParts;
  }
  return std::max<std::uint64_t>(1, std::stoull(s));
}

std::uint64_t gemm_work_bytes(std::uint64_t M, std::uint64_t N, std::uint64_t K,
                              std::uint64_t parts, std::uint64_t created_bytes) {
  const std::uint64_t operands = mul(2, add(mul(M, K), mul(N, K)));
  const std::uint64_t words = mul(mul(M, N), add(3, std::max<std::uint64_t>(parts, 1)));
  return add(add(operands, mul(4, words)), created_bytes);
}

std::string work_over_budget(std::uint64_t M, std::uint64_t N, std::uint64_t K, std::uint64_t parts,
                             std::uint64_t created_bytes, std::uint64_t file_bytes) {
  const std::uint64_t need = gemm_work_bytes(M, N, K, parts, created_bytes);
  const std::uint64_t budget = work_budget(file_bytes);
  if (need <= budget)
    return {};
  return std::to_string(M) + " x " + std::to_string(N) + " x " + std::to_string(K) + " with " +
         std::to_string(parts) + " split-K part(s)" +
         (created_bytes ? " and " + std::to_string(created_bytes) + " bytes of tensors it creates"
                        : std::string()) +
         " needs " + (need == kSaturated ? std::string("over 2^64") : std::to_string(need)) +
         " bytes, over the budget of " + std::to_string(budget) +
         " bytes of one call in a replay of this file (" +
         std::to_string(kWorkBudgetBaseBytes >> 20) + " MiB plus " +
         std::to_string(kWorkBudgetFactor) + " times the file's " + std::to_string(file_bytes) +
         " bytes)";
}

} // namespace mmaemu::recordings
