#pragma once
// A model folder's model, built from its config.json and loaded with the full hf::load.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "models/bert/pretrained.hpp"
#include "models/gpt2/pretrained.hpp"
#include "src/cli/errors.hpp"
#include "src/cli/model_folder.hpp"

namespace remat::cli {

// The config's fields as remat understood them (HF names, sorted), for printing.
nlohmann::json config_fields(const ModelFolder& folder);

// Calls f(model, report) with the folder's model: gpt2::Model, bert::Model or bert::BaseModel.
template <class F>
decltype(auto) with_pretrained(const ModelFolder& folder, F&& f) {
    hf::LoadReport report;
    switch (folder.architecture) {
        case Architecture::gpt2_lm_head: {
            gpt2::Model model = gpt2::from_pretrained(folder.dir, &report);
            return std::forward<F>(f)(model, report);
        }
        case Architecture::bert_masked_lm: {
            bert::Model model = bert::from_pretrained(folder.dir, &report);
            return std::forward<F>(f)(model, report);
        }
        case Architecture::bert_base: break;
    }
    const bert::Config config = bert::Config::from_file(folder.config);
    Generator init(0);  // overwritten by the checkpoint
    bert::BaseModel model = bert::create_base(config, init);
    report = hf::load(model, folder.dir);
    return std::forward<F>(f)(model, report);
}

}  // namespace remat::cli
