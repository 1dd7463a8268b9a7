// "Did you mean": the nearest of a few known words to a mistyped one, for error messages.
#pragma once

#include <string>
#include <vector>

namespace ars {

// The candidate closest to `word` (edit distance, or `word` a prefix of it), when it is close
// enough to be a likely typo; empty otherwise.
std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'X'?)" for the nearest candidate written as `prefix` + X, or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& prefix = "");

// "a, b, c" in the order given.
std::string join(const std::vector<std::string>& words, const std::string& separator = ", ");

}  // namespace ars
