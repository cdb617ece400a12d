#include "src/cli/model_folder.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "src/cli/errors.hpp"

namespace remat::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* name(Architecture a) {
    switch (a) {
        case Architecture::gpt2_lm_head: return "GPT2LMHeadModel";
        case Architecture::bert_masked_lm: return "BertForMaskedLM";
        case Architecture::bert_base: return "BertModel";
    }
    return "?";
}

namespace {
json read_json(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Failure(path.string() + ": cannot read");
    std::stringstream text;
    text << in.rdbuf();
    try {
        json j = json::parse(text.str());
        if (!j.is_object()) throw Failure(path.string() + ": expected a JSON object");
        return j;
    } catch (const json::exception& e) {  // parse_error, and out_of_range for a number such as 1e400
        throw Failure(path.string() + ": not valid JSON (" + e.what() + ")");
    }
}
}  // namespace

ModelFolder inspect(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) throw Failure(dir.string() + ": no such file or folder");
    if (!fs::is_directory(dir, ec)) throw Failure(dir.string() + ": not a model folder");
    const fs::path config = dir / "config.json";
    if (!fs::exists(config, ec))
        throw Failure(dir.string() + ": no config.json (a model folder holds config.json and model.safetensors)");
    const json j = read_json(config);

    std::vector<std::string> architectures;
    if (j.contains("architectures") && j["architectures"].is_array())
        for (const auto& a : j["architectures"])
            if (a.is_string()) architectures.push_back(a.get<std::string>());
    auto has = [&](const char* a) { return std::find(architectures.begin(), architectures.end(), a) != architectures.end(); };
    auto bert = [&] {
        // A bare encoder checkpoint (BertModel) has no masked-LM head to load.
        const bool base_only = has("BertModel") && !has("BertForMaskedLM");
        return ModelFolder{dir, config, base_only ? Architecture::bert_base : Architecture::bert_masked_lm};
    };

    if (j.contains("model_type")) {
        const json& model_type = j["model_type"];
        if (!model_type.is_string())  // containers by kind: dump() recurses, and "[[[[…" would overflow the stack
            throw Failure(config.string() + ": model_type must be a string, got " +
                          (model_type.is_array() ? "an array" : model_type.is_object() ? "an object" : model_type.dump()));
        const std::string type = j["model_type"].get<std::string>();
        if (type == "gpt2") return {dir, config, Architecture::gpt2_lm_head};
        if (type == "bert") return bert();
        throw Failure(config.string() + ": unsupported model_type \"" + type + "\" (remat supports gpt2 and bert)");
    }
    for (const std::string& a : architectures) {
        if (a == "GPT2LMHeadModel" || a == "GPT2Model") return {dir, config, Architecture::gpt2_lm_head};
        if (a == "BertForMaskedLM" || a == "BertModel") return bert();
    }
    throw Failure(config.string() +
                  ": no model_type and no supported architectures (remat supports model_type gpt2 and bert, or "
                  "GPT2LMHeadModel, BertForMaskedLM, BertModel)");
}

}  // namespace remat::cli
