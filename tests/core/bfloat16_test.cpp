// float32 -> bfloat16 against PyTorch's own conversion (tests/fixtures/make_bf16_fixtures.py: specials,
// ties, subnormals, NaNs, random bit patterns), the buffer version against the scalar one, and the way back.
#include <doctest/doctest.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "remat/core/bfloat16.hpp"
#include "remat/core/error.hpp"

using namespace remat;

TEST_CASE("bfloat16: PyTorch's rounding, bit for bit") {
    std::ifstream in(std::filesystem::path(REMAT_FIXTURES) / "bf16.json");
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json fixture = nlohmann::json::parse(text.str());
    std::vector<float> x;
    std::vector<std::uint16_t> expected;
    for (const auto& c : fixture["cases"]) {
        x.push_back(std::bit_cast<float>(c[0].get<std::uint32_t>()));
        expected.push_back(c[1].get<std::uint16_t>());
    }
    REQUIRE(x.size() == 4064);
    int wrong = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (to_bfloat16(x[i]) == expected[i]) continue;
        if (++wrong <= 5) FAIL_CHECK("float bits 0x" << std::hex << std::bit_cast<std::uint32_t>(x[i]) << ": got 0x" << to_bfloat16(x[i])
                                                     << ", PyTorch 0x" << expected[i]);
    }
    CHECK(wrong == 0);
    std::vector<std::uint16_t> bulk(x.size());
    to_bfloat16(x, bulk);
    CHECK(bulk == expected);
    CHECK_THROWS_AS(to_bfloat16(x, std::span<std::uint16_t>(bulk).first(3)), ValueError);
}

TEST_CASE("bfloat16: back to float exactly") {
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const auto h = static_cast<std::uint16_t>(b);
        const float f = from_bfloat16(h);
        if ((b & 0x7FFF) > 0x7F80) continue;  // NaNs: all become 0xFFFF
        REQUIRE(to_bfloat16(f) == h);
    }
}
