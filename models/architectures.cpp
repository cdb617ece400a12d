// The architecture table: one line per HuggingFace class remat builds (docs/models.md).
#include <algorithm>
#include <deque>
#include <mutex>

#include "models/architecture.hpp"
#include "models/build_limit.hpp"
#include "models/common/config_json.hpp"
#include "remat/core/in_quotes.hpp"

// Each folder's entry, models::architecture_of<Facts>() compiled in its architecture.cpp. Declared here
// rather than included, so that editing a model recompiles its own folder and not the table.
namespace remat::gpt2 {
models::Architecture lm_head_entry();
}
namespace remat::bert {
models::Architecture masked_lm_entry();
models::Architecture base_entry();
}
namespace remat::llama {
models::Architecture causal_lm_entry();
}
namespace remat::qwen2 {
models::Architecture causal_lm_entry();
}
namespace remat::mistral {
models::Architecture causal_lm_entry();
}

namespace remat::models {

namespace {

std::deque<Architecture>& entries() {
    static std::deque<Architecture> table = [] {
        std::deque<Architecture> t;
        t.push_back(gpt2::lm_head_entry());
        t.push_back(bert::masked_lm_entry());
        t.push_back(bert::base_entry());
        t.push_back(llama::causal_lm_entry());
        t.push_back(qwen2::causal_lm_entry());
        t.push_back(mistral::causal_lm_entry());
        return t;
    }();
    return table;
}

std::mutex registry_mutex;

std::vector<const Architecture*>& listing() {
    static std::vector<const Architecture*> list = [] {
        std::vector<const Architecture*> l;
        for (const Architecture& a : entries()) l.push_back(&a);
        return l;
    }();
    return list;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

const std::vector<const Architecture*>& architectures() { return listing(); }

void register_architecture(Architecture architecture) {
    std::lock_guard lock(registry_mutex);
    if (find_class(architecture.hf_class))
        throw ValueError("register_architecture: " + architecture.hf_class + " is already in the table");
    listing();  // the built-in entries first
    entries().push_back(std::move(architecture));  // a deque: earlier entries stay where they are
    listing().push_back(&entries().back());
}

std::vector<std::string> model_types() {
    std::vector<std::string> out;
    for (const Architecture* a : architectures())
        if (!contains(out, a->model_type)) out.push_back(a->model_type);
    return out;
}

const Architecture* find_class(const std::string& hf_class) {
    for (const Architecture* a : architectures())
        if (a->hf_class == hf_class || contains(a->also_loads, hf_class)) return a;
    return nullptr;
}

const Architecture& find_for_config(const std::string& text, const std::string& source) {
    using config_json::json;
    const json j = config_json::parse_object(text, source);
    std::vector<std::string> listed;
    if (j.contains("architectures") && j["architectures"].is_array())
        for (const auto& a : j["architectures"])
            if (a.is_string()) listed.push_back(a.get<std::string>());

    std::string type;
    if (j.contains("model_type")) {
        if (!j["model_type"].is_string())
            throw ValueError(source + ": model_type must be a string, got " + config_json::shown(j["model_type"]));
        type = j["model_type"].get<std::string>();
    } else {
        for (const std::string& name : listed)
            if (const Architecture* a = find_class(name)) {
                type = a->model_type;
                break;
            }
        if (type.empty()) {
            std::vector<std::string> classes;
            for (const Architecture* a : architectures()) classes.push_back(a->hf_class);
            std::string list;
            for (const std::string& c : classes) list += (list.empty() ? "" : ", ") + c;
            throw ValueError(source + ": no model_type and no supported architectures (remat supports model_type " +
                             join(model_types(), "and") + ", or " + list + ")");
        }
    }
    const Architecture* first = nullptr;
    for (const Architecture* a : architectures()) {
        if (a->model_type != type) continue;
        if (contains(listed, a->hf_class)) return *a;
        if (!first) first = a;
    }
    if (!first)
        throw ValueError(source + ": unsupported model_type " + in_quotes(type) + " (remat supports " +
                         join(model_types(), "and") + ")");
    return *first;
}

std::unique_ptr<Model> load(const Architecture& architecture, const std::filesystem::path& dir, const Policy& policy,
                            std::shared_ptr<Generator> dropout_rng, hf::LoadReport* report) {
    const std::filesystem::path path = dir / "config.json";
    const std::string text = config_json::read_file(path);
    architecture.check_config(text, path.string());
    // The checkpoint's header bounds what building may allocate: sizes it cannot fill are refused early.
    const hf::WeightFiles files = hf::WeightFiles::open(dir);
    Generator init(0);  // overwritten by the checkpoint
    std::unique_ptr<Model> model =
        build_within(files, path.string(), sizes_text(architecture.size_fields, architecture.summary(text).sizes),
                     [&] { return architecture.create(text, init, std::move(dropout_rng), policy); });
    hf::LoadReport r = model->load(dir);
    if (report) *report = std::move(r);
    return model;
}

Var Model::training_loss(const data::Batch& batch) { return loss(logits(batch), batch.id("labels")); }

std::string join(const std::vector<std::string>& items, const std::string& last_separator) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += i + 1 == items.size() ? " " + last_separator + " " : ", ";
        out += items[i];
    }
    return out;
}

}  // namespace remat::models

namespace remat::models::detail {

std::string with_fields(const std::string& config, const std::vector<std::string>& names, const std::string& model_type,
                        const std::vector<std::pair<std::string, std::string>>& fields,
                        const std::function<std::string(const std::string&)>& read) {
    using config_json::json;
    json j = config_json::parse_object(config, "config");
    for (const auto& [name, text] : fields) {
        if (!contains(names, name))
            throw ValueError(model_type + " configs have no field " + name + " (they read " + join(names, "and") + ")");
        json value;
        try {
            value = strict_json::parse<json>(text, name);
        } catch (const FormatError&) {
            value = text;  // a bare string: --hidden-act silu
        }
        j[name] = std::move(value);
    }
    return read(j.dump());
}

}  // namespace remat::models::detail
