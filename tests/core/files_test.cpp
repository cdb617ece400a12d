#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "remat/core/error.hpp"
#include "remat/core/files.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;

TEST_CASE("read_file") {
    const test::TempDir tmp("remat-files");
    SUBCASE("the bytes, whole") {
        const std::string bytes("{\"a\": 1}\n\0\xff", 11);
        CHECK(read_file(tmp.write("config.json", bytes), 100, "a config file") == bytes);
        CHECK(read_file(tmp.write("empty.json", ""), 100, "a config file").empty());
        CHECK(read_file(tmp.write("exact.json", "12345"), 5, "a config file") == "12345");
    }
    SUBCASE("a file over the limit is refused, naming the file and the limit") {
        const auto p = tmp.write("big.json", std::string(101, ' '));
        CHECK_THROWS_WITH_AS(read_file(p, 100, "a config file"),
                             (p.string() + ": is 101 bytes, over the 100-byte limit for a config file").c_str(), FormatError);
    }
    SUBCASE("a folder, a missing file, a device") {
        CHECK_THROWS_WITH_AS(read_file(tmp.path, 100, "a config file"), (tmp.path.string() + ": is a folder, expected a file").c_str(),
                             FormatError);
        CHECK_THROWS_WITH_AS(read_file(tmp / "none.json", 100, "a config file"),
                             ((tmp / "none.json").string() + ": cannot read: No such file or directory").c_str(), FormatError);
        // /dev/zero claims no size and never ends: refused without reading it.
        CHECK_THROWS_WITH_AS(read_file("/dev/zero", 100, "a config file"), "/dev/zero: is a character device, expected a regular file", FormatError);
    }
}
