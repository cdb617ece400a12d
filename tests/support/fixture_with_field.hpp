#pragma once
// A copy of a model fixture folder whose config.json has one field's value replaced (for configs that
// must be refused, or that a checkpoint cannot fill).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/fixtures.hpp"
#include "tests/support/read_text.hpp"
#include "tests/support/temp_dir.hpp"

namespace remat::test {

// tests/fixtures/<name> copied into tmp (model.safetensors and config.json), `field` set to `value`
// (JSON text). Each call makes a new folder.
inline std::filesystem::path fixture_with_field(const TempDir& tmp, const std::string& name, const std::string& field,
                                                const std::string& value) {
    static int made = 0;
    const std::filesystem::path dir = tmp / (name + "-" + std::to_string(++made));
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(fixtures / name / "model.safetensors", dir / "model.safetensors");
    std::string config = read_text(fixtures / name / "config.json");
    const std::size_t at = config.find("\"" + field + "\": ");
    REQUIRE(at != std::string::npos);
    const std::size_t begin = at + field.size() + 4, end = config.find_first_of(",\n}", begin);
    config.replace(begin, end - begin, value);
    std::ofstream(dir / "config.json", std::ios::binary) << config;
    return dir;
}

}  // namespace remat::test
