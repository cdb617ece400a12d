#include "src/cli/pretrained.hpp"

namespace remat::cli {

nlohmann::json config_fields(const ModelFolder& folder) {
    nlohmann::json j;
    if (folder.architecture == Architecture::gpt2_lm_head) {
        j = nlohmann::json::parse(gpt2::Config::from_file(folder.config).to_json());
        for (const char* k : {"n_ctx", "bos_token_id", "eos_token_id"}) j.erase(k);  // not read by remat
    } else {
        j = nlohmann::json::parse(bert::Config::from_file(folder.config).to_json());
    }
    j.erase("architectures");
    return j;
}

}  // namespace remat::cli
