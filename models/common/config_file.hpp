#pragma once
// What every architecture's Config does with config.json, written once for all of them: a Config
// derives from ConfigFile<Config> and declares its fields in a schema (models/common/config_schema.hpp,
// which defines these members; the model's config.cpp instantiates them).
#include <filesystem>
#include <string>
#include <vector>

namespace remat::config_json {
template <class C>
class Schema;
}  // namespace remat::config_json

namespace remat::models {

template <class C>
struct ConfigFile {
    // From config.json text; `source` names the file in messages ("<source>: n_head must be …").
    // Required fields must be there; the others default as in HF.
    static C from_json(const std::string& text, const std::string& source = "config.json");
    static C from_file(const std::filesystem::path& path);
    // Throws ValueError naming the first field out of range ("GPT-2 config: n_head must be positive").
    void validate() const;
    // config.json text that HuggingFace transformers can load.
    std::string to_json() const;
    // The fields remat reads, as one JSON object text (for `remat info`).
    std::string fields_json() const;
    // Their names, in declaration order (without older names and computed fields).
    static std::vector<std::string> field_names();
};

}  // namespace remat::models
