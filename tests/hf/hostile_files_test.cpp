// Files that are not what they claim to be: special files under a file's name (refused by type, without
// blocking or reading them), and a checkpoint truncated while it is mapped (an error, not SIGBUS).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "remat/data/token_file.hpp"
#include "remat/hf/pytorch_bin.hpp"
#include "remat/hf/safetensors.hpp"
#include "remat/hf/weight_files.hpp"
#include "remat/text/tokenizer.hpp"
#include "tests/support/table_model.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/fixtures.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {

using test::fixtures;

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

// A model folder copy whose `name` is replaced by what make() puts there.
fs::path folder_with(const test::TempDir& tmp, const std::string& name, const std::function<void(const fs::path&)>& make) {
    static int made = 0;
    const fs::path dir = tmp / ("model-" + std::to_string(++made));
    fs::copy(fixtures / "gpt2-tiny", dir);
    fs::remove(dir / name);
    make(dir / name);
    return dir;
}
void fifo(const fs::path& p) { REQUIRE(::mkfifo(p.c_str(), 0644) == 0); }

}  // namespace

TEST_CASE("special files in place of a model's files are refused by type, at once") {
    const test::TempDir tmp("remat-hostile-files");
    const auto started = std::chrono::steady_clock::now();
    auto weights = [](const fs::path& dir) { return [dir] { (void)hf::WeightFiles::open(dir); }; };
    auto model = [](const fs::path& dir) { return [dir] { (void)test::load_table_model("GPT2LMHeadModel", dir); }; };

    const fs::path a = folder_with(tmp, "model.safetensors", fifo);
    CHECK(error_of(weights(a)) == (a / "model.safetensors").string() + ": is a FIFO (named pipe), expected a regular file");
    const fs::path b = folder_with(tmp, "config.json", fifo);
    CHECK(error_of(model(b)) == (b / "config.json").string() + ": is a FIFO (named pipe), expected a regular file");
    const fs::path c = folder_with(tmp, "config.json", [](const fs::path& p) { fs::create_symlink("/dev/zero", p); });
    CHECK(error_of(model(c)) == (c / "config.json").string() + ": is a character device, expected a regular file");
    const fs::path d = folder_with(tmp, "model.safetensors", [](const fs::path& p) { fs::create_symlink("/dev/urandom", p); });
    CHECK(error_of(weights(d)) == (d / "model.safetensors").string() + ": is a character device, expected a regular file");
    const fs::path e = folder_with(tmp, "config.json", [](const fs::path& p) { fs::create_directory(p); });
    CHECK(error_of(model(e)) == (e / "config.json").string() + ": is a folder, expected a file");

    // A shard and its index.
    const fs::path sharded = folder_with(tmp, "model.safetensors", [](const fs::path& p) {
        std::ofstream(p.parent_path() / "model.safetensors.index.json") << R"({"weight_map": {"wte.weight": "shard.safetensors"}})";
        fifo(p.parent_path() / "shard.safetensors");
    });
    CHECK(error_of(weights(sharded)) == (sharded / "shard.safetensors").string() + ": is a FIFO (named pipe), expected a regular file");
    const fs::path index = folder_with(tmp, "model.safetensors", [](const fs::path& p) { fifo(p.parent_path() / "model.safetensors.index.json"); });
    CHECK(error_of(weights(index)) == (index / "model.safetensors.index.json").string() + ": is a FIFO (named pipe), expected a regular file");

    // pytorch_model.bin, a token file, the tokenizer's files.
    fifo(tmp / "pytorch_model.bin");
    CHECK(error_of([&] { (void)hf::PytorchBinFile::open(tmp / "pytorch_model.bin"); }) ==
          (tmp / "pytorch_model.bin").string() + ": is a FIFO (named pipe), expected a regular file");
    fifo(tmp / "train.tok");
    CHECK(error_of([&] { (void)data::TokenFile::open(tmp / "train.tok"); }) ==
          (tmp / "train.tok").string() + ": is a FIFO (named pipe), expected a regular file");
    fifo(tmp / "vocab.json");
    CHECK(error_of([&] { (void)text::Gpt2Tokenizer::from_files(tmp / "vocab.json", fixtures / "tokenizer" / "merges.txt"); }) ==
          (tmp / "vocab.json").string() + ": is a FIFO (named pipe), expected a regular file");
    fifo(tmp / "merges.txt");
    CHECK(error_of([&] { (void)text::Gpt2Tokenizer::from_files(fixtures / "tokenizer" / "vocab.json", tmp / "merges.txt"); }) ==
          (tmp / "merges.txt").string() + ": is a FIFO (named pipe), expected a regular file");
    fs::create_symlink("/dev/zero", tmp / "tokenizer.json");
    CHECK(error_of([&] { (void)text::Gpt2Tokenizer::from_tokenizer_json(tmp / "tokenizer.json"); }) ==
          (tmp / "tokenizer.json").string() + ": is a character device, expected a regular file");

    // None of them waited for a writer or read a byte (a FIFO would block forever, /dev/zero never end).
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
}

TEST_CASE("a file truncated while mapped is an error naming it, not SIGBUS") {
    const test::TempDir tmp("remat-hostile-files");
    SUBCASE("safetensors") {
        const Tensor big = zeros({256, 1024});  // 1 MiB: many pages past the header
        const fs::path p = tmp / "w.safetensors";
        hf::write_safetensors(p, {hf::f32("w", big)});
        const auto f = hf::SafetensorsFile::open(p);
        const std::size_t size = fs::file_size(p);
        fs::resize_file(p, 4096);  // cp of a new model over the old one, caught half-way
        CHECK(error_of([&] { (void)f.read_float(*f.find("w")); }) ==
              p.string() + ": the file shrank while it was being read (" + std::to_string(size) +
                  " bytes when opened, now 4096 bytes): was it overwritten in place?");
        CHECK(error_of([&] { (void)f.read_int(hf::TensorInfo{"w", hf::DType::I32, {256, 1024}, 0, 1 << 20}); })
                  .find("the file shrank while it was being read") != std::string::npos);
        // The reader still works for what lies before the cut, and the process goes on.
        fs::resize_file(p, 0);
        CHECK(error_of([&] { (void)f.read_float(*f.find("w")); }).find("now 0 bytes") != std::string::npos);
    }
    SUBCASE("a token file") {
        const fs::path p = tmp / "t.tok";
        {
            data::TokenFileWriter w(p, 1, 50000);
            std::vector<std::int64_t> ids(1 << 20, 7);
            w.write(ids);
            w.commit();
        }
        const auto f = data::TokenFile::open(p);
        fs::resize_file(p, 8192);
        std::vector<std::int64_t> out(1 << 19);
        CHECK(error_of([&] { f.read((1 << 20) - out.size(), out.size(), out.data()); })
                  .starts_with(p.string() + ": the file shrank while it was being read"));
        f.read(0, 100, out.data());  // the pages still there read as before
        CHECK(out[99] == 7);
    }
}

TEST_CASE("the atomic writers replace only a regular file") {
    const test::TempDir tmp("remat-hostile-files");
    const Tensor one{1.0f};
    fs::create_symlink("/dev/null", tmp / "null.safetensors");
    CHECK(error_of([&] { hf::write_safetensors(tmp / "null.safetensors", {hf::f32("w", one)}); }) ==
          (tmp / "null.safetensors").string() + ": is a character device; only a regular file can be replaced");
    CHECK(fs::is_symlink(tmp / "null.safetensors"));
    fifo(tmp / "pipe.safetensors");
    CHECK(error_of([&] { hf::write_safetensors(tmp / "pipe.safetensors", {hf::f32("w", one)}); }) ==
          (tmp / "pipe.safetensors").string() + ": is a FIFO (named pipe); only a regular file can be replaced");
    fs::create_directory(tmp / "folder.safetensors");
    CHECK(error_of([&] { hf::write_safetensors(tmp / "folder.safetensors", {hf::f32("w", one)}); }) ==
          (tmp / "folder.safetensors").string() + ": is a folder; only a regular file can be replaced");
    // Nothing left behind; a regular file (or a new path) is written as always.
    CHECK(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()) == 3);
    hf::write_safetensors(tmp / "w.safetensors", {hf::f32("w", one)});
    hf::write_safetensors(tmp / "w.safetensors", {hf::f32("w", one)});
    CHECK(hf::SafetensorsFile::open(tmp / "w.safetensors").tensors().size() == 1);
}
