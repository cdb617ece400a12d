#include "models/bert/pretrained.hpp"

namespace remat::bert {

Model from_pretrained(const std::filesystem::path& dir, hf::LoadReport* report, std::shared_ptr<Generator> dropout_rng) {
    const Config config = Config::from_file(dir / "config.json");
    Generator init(0);  // overwritten by the checkpoint
    Model model = create(config, init, std::move(dropout_rng));
    hf::LoadReport r = hf::load(model, dir);
    if (report) *report = std::move(r);
    return model;
}

}  // namespace remat::bert
