// libFuzzer target: a config.json together with building its model (models::load), over the tiny
// GPT-2 and BERT checkpoints of tests/fixtures. The input is the config's text; each run tries it in
// both folders. Every input must give a model or a remat::Error; anything else is a finding. Whatever
// the config says, loading may allocate no more than the checkpoint justifies (models::build_limit,
// plus the tensors being read): more is a finding (trap), as is any allocation libFuzzer's
// -malloc_limit_mb sees. A model that loads runs one forward pass. Seeds: corpus/config_model/.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "models/architecture.hpp"
#include "models/build_limit.hpp"
#include "remat/ad/backend.hpp"
#include "remat/core/error.hpp"
#include "remat/core/memory.hpp"
#include "remat/hf/weight_files.hpp"
#include "tests/fuzz/memory_file.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {

// Two model folders whose config.json is a symlink to the in-memory file holding the input.
struct Folders {
    fs::path root;
    fuzz::MemoryFile config;
    Folders() {
        std::string pattern = (fs::temp_directory_path() / "remat-fuzz-config-model-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) std::abort();
        root = pattern;
        for (const char* name : {"gpt2-tiny", "bert-tiny"}) {
            fs::create_directory(root / name);
            fs::copy_file(fs::path(REMAT_FIXTURES) / name / "model.safetensors", root / name / "model.safetensors");
            fs::create_symlink(config.hold(nullptr, 0), root / name / "config.json");
        }
    }
    ~Folders() {
        std::error_code ignored;
        fs::remove_all(root, ignored);
    }
};

void try_load(const fs::path& dir, const std::string& text) {
    const hf::WeightFiles files = hf::WeightFiles::open(dir);
    const std::size_t allowed = models::build_limit(files) + files.float32_bytes();
    const std::size_t before = memory::live_bytes();
    try {
        const memory::PeakScope peak;
        const models::Architecture& arch = models::find_for_config(text, "config.json");
        auto model = models::load(arch, dir, Policy::none());
        if (peak.peak_above_baseline() > allowed) __builtin_trap();
        const models::Summary s = arch.summary(text);
        if (arch.objective != models::Objective::none && s.sizes.vocab_size > 0 && s.sizes.n_positions > 0) {
            const std::size_t t = std::min<std::size_t>(4, s.sizes.n_positions);
            IdTensor ids = IdTensor::from_shape({1, t});
            for (std::size_t i = 0; i < t; ++i) ids(0, i) = static_cast<std::int64_t>(i % s.sizes.vocab_size);
            ad::NoGrad no_grad;
            (void)model->logits({.ids = {{"input_ids", ids}}});
        }
    } catch (const Error&) {
    }
    if (memory::live_bytes() != before) __builtin_trap();  // nothing kept after a refusal
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static Folders folders;
    folders.config.hold(data, size);
    const std::string text(reinterpret_cast<const char*>(data), size);
    try_load(folders.root / "gpt2-tiny", text);
    try_load(folders.root / "bert-tiny", text);
    return 0;
}
