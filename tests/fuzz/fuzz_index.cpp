// libFuzzer target: the sharded checkpoint index (model.safetensors.index.json) through
// WeightFiles::open, then every tensor it resolves. The input is the index text; the folder
// around it is made once per process and holds:
//   model-00001-of-00002.safetensors   a (F32 (2,)), b (F16 (2, 2))
//   model-00002-of-00002.safetensors   c (I64 (3,)), d (BF16 ())
//   dup.safetensors                    a again (a name in two shards)
//   bad.safetensors                    not a safetensors file
//   model.safetensors.index.json       a symlink to the in-memory file holding the input (rewriting a
//                                      real file each run costs ext4 a flush: ~270 runs/s instead of ~3000)
// Seeds: corpus/index/ (tests/fuzz/make_seeds.py).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "remat/hf/weight_files.hpp"
#include "tests/fuzz/memory_file.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {

struct Folder {
    fs::path dir;
    fuzz::MemoryFile index;
    Folder() {
        std::string pattern = (fs::temp_directory_path() / "remat-fuzz-index-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) std::abort();
        dir = pattern;
        const Tensor a{1.0f, 2.0f};
        const IdTensor c{1, 2, 3};
        const std::uint16_t b[4] = {0x3c00, 0xc000, 0x0001, 0x7c00};  // 1, -2, the smallest subnormal, inf
        const std::uint16_t d = 0x3f80;                               // 1.0
        hf::write_safetensors(dir / "model-00001-of-00002.safetensors",
                              {hf::f32("a", a), {"b", hf::DType::F16, {2, 2}, std::as_bytes(std::span(b))}});
        hf::write_safetensors(dir / "model-00002-of-00002.safetensors",
                              {hf::i64("c", c), {"d", hf::DType::BF16, {}, std::as_bytes(std::span(&d, 1))}});
        hf::write_safetensors(dir / "dup.safetensors", {hf::f32("a", a)});
        std::ofstream(dir / "bad.safetensors") << "not a safetensors file";
        fs::create_symlink(index.hold(nullptr, 0), dir / "model.safetensors.index.json");
    }
    ~Folder() {
        std::error_code ignored;
        fs::remove_all(dir, ignored);
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static Folder folder;
    folder.index.hold(data, size);
    try {
        const auto files = hf::WeightFiles::open(folder.dir);
        for (const std::string& name : files.names()) {
            const hf::TensorInfo* t = files.find(name);
            if (!t || t->name != name) __builtin_trap();
            if (t->dtype == hf::DType::I64)
                (void)files.read_int(name);
            else
                (void)files.read_float(name);
        }
    } catch (const hf::FormatError&) {
    }
    return 0;
}
