// SPDX-License-Identifier: BSD-2-Clause
#include "text_table.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace mmaemu::cli {

namespace {

// `text` in lines of at most `width` characters, broken at spaces (a word longer than the
// width is broken where it must be).
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t end = std::min(text.find(' ', i), text.size());
    std::string word = text.substr(i, end - i);
    i = end + 1;
    while (word.size() > width) {
      if (!line.empty()) {
        lines.push_back(line);
        line.clear();
      }
      lines.push_back(word.substr(0, width));
      word.erase(0, width);
    }
    if (line.empty()) {
      line = word;
    } else if (line.size() + 1 + word.size() <= width) {
      line += " " + word;
    } else {
      lines.push_back(line);
      line = word;
    }
  }
  if (!line.empty() || lines.empty())
    lines.push_back(line);
  return lines;
}

} // namespace

std::size_t terminal_width() {
  winsize ws{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
    return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS"); c && *c) {
    const long v = std::strtol(c, nullptr, 10);
    if (v >= 40 && v <= 1000)
      return static_cast<std::size_t>(v);
  }
  return 100;
}

std::string text_table(const std::vector<TextColumn>& columns,
                       const std::vector<std::vector<std::string>>& rows, std::size_t width) {
  constexpr std::size_t kGap = 2;
  std::vector<std::size_t> w(columns.size());
  std::size_t used = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    std::size_t widest = columns[c].title.size();
    for (const auto& r : rows) {
      if (c < r.size())
        widest = std::max(widest, r[c].size());
    }
    if (columns[c].max_width == 0) {
      const std::size_t rest = width > used ? width - used : 0;
      w[c] = std::min(widest, std::max<std::size_t>(rest, 24));
    } else {
      w[c] = std::min(widest, std::max(columns[c].max_width, columns[c].title.size()));
    }
    used += w[c] + kGap;
  }
  // Too wide: narrow the widest columns, one character at a time, down to their longest word
  // (at most 16) or title, so that words stay whole where they can.
  std::vector<std::size_t> least(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    std::size_t word = 0;
    for (const auto& r : rows) {
      if (c >= r.size())
        continue;
      std::size_t run = 0;
      for (const char ch : r[c]) {
        run = ch == ' ' ? 0 : run + 1;
        word = std::max(word, run);
      }
    }
    least[c] = std::max(columns[c].title.size(), std::min<std::size_t>(word, 16));
  }
  while (used - kGap > width) {
    std::size_t pick = columns.size();
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (w[c] > least[c] && (pick == columns.size() || w[c] > w[pick]))
        pick = c;
    }
    if (pick == columns.size())
      break; // as narrow as it goes
    --w[pick];
    --used;
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& cells) {
    std::vector<std::vector<std::string>> wrapped(columns.size());
    std::size_t height = 1;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      wrapped[c] = wrap(c < cells.size() ? cells[c] : std::string(), w[c]);
      height = std::max(height, wrapped[c].size());
    }
    for (std::size_t l = 0; l < height; ++l) {
      std::string line;
      for (std::size_t c = 0; c < columns.size(); ++c) {
        const std::string& part = l < wrapped[c].size() ? wrapped[c][l] : std::string();
        line += part;
        if (c + 1 < columns.size())
          line += std::string(w[c] - part.size() + kGap, ' ');
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      out += line + "\n";
    }
  };
  std::vector<std::string> titles;
  for (const auto& c : columns)
    titles.push_back(c.title);
  emit(titles);
  for (const auto& r : rows)
    emit(r);
  return out;
}

} // namespace mmaemu::cli
