#include "cli/model_folder.hpp"

#include <algorithm>

#include "models/common/config_json.hpp"
#include "cli/errors.hpp"
#include "remat/core/files.hpp"
#include "remat/hf/load.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

ModelFolder inspect(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) throw Failure(dir.string() + ": " + why_missing(dir));
    if (!fs::is_directory(dir, ec)) throw Failure(dir.string() + ": not a model folder");
    const fs::path config = dir / "config.json";
    if (!fs::exists(config, ec))
        throw Failure(dir.string() + ": no config.json (a model folder holds config.json and model.safetensors)");
    std::string text = config_json::read_file(config);
    const models::Architecture& architecture = models::find_for_config(text, config.string());
    architecture.check_config(text, config.string());
    return {dir, config, std::move(text), &architecture};
}

std::unique_ptr<models::Model> load_model(const ModelFolder& folder, const Policy& policy,
                                          std::shared_ptr<Generator> dropout_rng, hf::LoadReport* report) {
    hf::LoadReport r;
    // A budget or `auto` is planned once the model exists (cli/checkpoint_plan.hpp); until then every
    // block is checkpointed.
    auto model = models::load(*folder.architecture, folder.dir, policy.needs_planning() ? Policy::blocks() : policy,
                              std::move(dropout_rng), &r);
    if (report)
        *report = std::move(r);
    else
        for (const std::string& w : r.warnings) print_warning(w);
    return model;
}

// The files of a model folder that describe its tokenizer, copied along when saving.
constexpr const char* tokenizer_files[] = {"vocab.json", "merges.txt", "tokenizer.json", "vocab.txt",
                                           "tokenizer_config.json", "special_tokens_map.json"};

std::string save_model_folder(models::Model& model, const ModelFolder& from, const fs::path& to) {
    model.save(from.config_text, to);
    std::string written = "config.json, model.safetensors";
    std::error_code ec;
    if (fs::equivalent(from.dir, to, ec)) return written;
    for (const char* name : tokenizer_files)
        if (fs::is_regular_file(from.dir / name, ec)) {
            hf::write_text_atomically(to / name, read_file(from.dir / name, std::size_t{256} << 20, "a tokenizer file"));
            written += std::string(", ") + name;
        }
    return written;
}

std::string causal_lm_families() {
    std::vector<std::string> families;
    for (const models::Architecture* a : models::architectures())
        if (a->objective == models::Objective::causal_lm &&
            std::find(families.begin(), families.end(), a->family) == families.end())
            families.push_back(a->family);
    return models::join(families, "and");
}

ModelFolder causal_lm_folder(const fs::path& dir, std::string_view command) {
    ModelFolder folder = inspect(dir);
    if (folder.architecture->objective != models::Objective::causal_lm)
        throw Failure(folder.config.string() + ": remat " + std::string(command) + " fine-tunes " +
                      causal_lm_families() + " language models; this folder holds " + folder.architecture->hf_class);
    return folder;
}

ModelFolder trainable_folder(const fs::path& dir) {
    ModelFolder folder = inspect(dir);
    if (folder.architecture->objective == models::Objective::none) {
        std::vector<std::string> heads;
        for (const models::Architecture* a : models::architectures())
            if (a->objective != models::Objective::none) heads.push_back(a->hf_class);
        throw Failure(folder.config.string() + ": remat train trains models with a language-model head (" +
                      models::join(heads, "or") + "); this folder holds " + folder.architecture->hf_class);
    }
    return folder;
}

}  // namespace remat::cli
