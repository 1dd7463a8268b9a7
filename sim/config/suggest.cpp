#include "sim/config/suggest.h"

#include <algorithm>
#include <cctype>

namespace ars {

namespace {

std::string lower(const std::string& text) {
  std::string out;
  for (char c : text) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string typed = lower(word);
  std::string best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    const std::string known = lower(candidate);
    // A cut-short name (`--link.bandwidth`) is one edit from the whole, plus its own typos
    // (`--link.bandwith`): the distance to the name's start of about the typed length.
    std::size_t distance = edit_distance(typed, known);
    for (std::size_t length = typed.size() - 1; typed.size() >= 3 && length <= typed.size() + 1;
         ++length) {
      if (length < known.size())
        distance = std::min(distance, 1 + edit_distance(typed, known.substr(0, length)));
    }
    if (best.empty() || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  // Up to a third of the word may be wrong, and at least one letter.
  const std::size_t allowed = std::max<std::size_t>(1, typed.size() / 3);
  return !best.empty() && best_distance <= allowed ? best : "";
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& prefix) {
  const std::string nearest = nearest_word(word, candidates);
  return nearest.empty() ? "" : " (did you mean '" + prefix + nearest + "'?)";
}

std::string join(const std::vector<std::string>& words, const std::string& separator) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : separator) + word;
  return text;
}

}  // namespace ars
