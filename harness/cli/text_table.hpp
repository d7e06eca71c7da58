// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A table for people: each column as wide as its widest cell, up to the column's limit; a
// longer cell wraps at spaces onto continuation lines of its own column, so that no text is
// cut and no two columns run together.

#include <cstddef>
#include <string>
#include <vector>

namespace mmaemu::cli {

struct TextColumn {
  std::string title;
  std::size_t max_width = 30; // 0: the rest of the line (at least 24), for the last column
};

// The table with a title line; `width` is the line length to fit (terminal_width()).
std::string text_table(const std::vector<TextColumn>& columns,
                       const std::vector<std::vector<std::string>>& rows, std::size_t width);

// The width of the terminal on stdout, else $COLUMNS, else 100.
std::size_t terminal_width();

} // namespace mmaemu::cli
