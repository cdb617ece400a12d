#pragma once
// tests/fixtures/, where the committed reference files are (REMAT_FIXTURES, set by tests/meson.build).
#include <filesystem>

namespace remat::test {

inline const std::filesystem::path fixtures = REMAT_FIXTURES;
inline const std::filesystem::path tokenizer_fixtures = fixtures / "tokenizer";  // GPT-2's vocab.json + merges.txt

}  // namespace remat::test
