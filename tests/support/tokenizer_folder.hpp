#pragma once
// A tokenizer folder of tests/fixtures/tokenizer_json, with its tokenizer.json unpacked into `tmp`
// when it ships gzipped (Qwen2.5's is 7 MB unpacked).
#include <doctest/doctest.h>
#include <zlib.h>

#include <filesystem>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace remat::test {

inline std::string gunzip(const std::filesystem::path& p) {
    gzFile f = gzopen(p.c_str(), "rb");
    REQUIRE(f != nullptr);
    std::string out;
    char buffer[1 << 16];
    for (int n; (n = gzread(f, buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
    gzclose(f);
    return out;
}

inline std::filesystem::path tokenizer_folder(const std::string& name, const TempDir& tmp) {
    const std::filesystem::path dir = std::filesystem::path(REMAT_FIXTURES) / "tokenizer_json" / name;
    if (std::filesystem::exists(dir / "tokenizer.json")) return dir;
    tmp.write("tokenizer.json", gunzip(dir / "tokenizer.json.gz"));
    std::filesystem::copy_file(dir / "tokenizer_config.json", tmp / "tokenizer_config.json");
    return tmp.path;
}

}  // namespace remat::test
