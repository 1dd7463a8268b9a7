#include "sim/suggest.h"

#include <algorithm>
#include <cctype>

namespace ars {

namespace {

std::string lower(const std::string& text) {
  std::string out;
  for (char c : text) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string typed = lower(word);
  std::string best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    const std::string known = lower(candidate);
    // A cut-short name (`--link.bandwidth`) is as near as a one-letter typo.
    const std::size_t distance =
        typed.size() >= 3 && known.rfind(typed, 0) == 0 ? 1 : edit_distance(typed, known);
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
