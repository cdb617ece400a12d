#include "remat/train/state_file.hpp"

#include <algorithm>
#include <charconv>

#include "remat/core/in_quotes.hpp"
#include "remat/hf/safetensors.hpp"

namespace remat::train::detail {

namespace {
constexpr const char* format_key = "format";
constexpr const char* format_value = "remat optimiser state 1";
constexpr const char* reserved_keys[] = {"format", "rule", "step"};

// Shortest text that reads back as the same float (std::to_chars' guarantee): settings survive exactly.
std::string exact_text(float v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

template <class T>
bool parse_whole(const std::string& text, T& out) {
    auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

const std::string* find(const std::vector<std::pair<std::string, std::string>>& metadata, std::string_view key) {
    for (const auto& [k, v] : metadata)
        if (k == key) return &v;
    return nullptr;
}
}  // namespace

void write_state_file(const std::filesystem::path& path, const SavedState& state) {
    std::vector<std::pair<std::string, std::string>> metadata{
        {format_key, format_value}, {"rule", state.rule}, {"step", std::to_string(state.step_value)}};
    for (const auto& [name, value] : state.settings) metadata.emplace_back(name, exact_text(*value));
    std::vector<hf::WriteTensor> tensors;
    tensors.reserve(state.tensors.size());
    for (const auto& [name, t] : state.tensors) tensors.push_back(hf::f32(name, *t));
    hf::write_safetensors(path, tensors, metadata);
}

void read_state_file(const std::filesystem::path& path, const LoadedState& state) {
    const auto file = hf::SafetensorsFile::open(path);
    const auto& metadata = file.metadata();
    std::vector<std::string> problems;

    const std::string* format = find(metadata, format_key);
    if (!format || *format != format_value)
        throw hf::FormatError(path.string() + ": not a remat optimiser state (metadata \"format\" is " +
                              (format ? in_quotes(*format) : std::string("missing")) + ")");
    const std::string* rule = find(metadata, "rule");
    if (!rule || *rule != state.rule)
        throw hf::FormatError(path.string() + ": the state of rule " + (rule ? *rule : std::string("(none)")) +
                              ", loading into " + state.rule);

    std::int64_t step = 0;
    const std::string* step_text = find(metadata, "step");
    if (!step_text || !parse_whole(*step_text, step) || step < 0)
        problems.push_back("step: " + (step_text ? in_quotes(*step_text) + " is not a step count" : std::string("missing")));

    std::vector<float> settings(state.settings.size());
    for (std::size_t i = 0; i < state.settings.size(); ++i) {
        const std::string& name = state.settings[i].first;
        const std::string* text = find(metadata, name);
        if (!text)
            problems.push_back("setting " + name + ": missing");
        else if (!parse_whole(*text, settings[i]))
            problems.push_back("setting " + name + ": " + in_quotes(*text) + " is not a number");
    }
    for (const auto& [key, value] : metadata) {
        bool known = std::find(std::begin(reserved_keys), std::end(reserved_keys), key) != std::end(reserved_keys);
        for (const auto& s : state.settings) known = known || s.first == key;
        if (!known) problems.push_back("setting " + key + ": not a setting of " + state.rule);
    }

    std::vector<const hf::TensorInfo*> infos(state.tensors.size());
    for (std::size_t i = 0; i < state.tensors.size(); ++i) {
        const auto& [name, t] = state.tensors[i];
        const hf::TensorInfo* info = file.find(name);
        if (!info) {
            problems.push_back("tensor " + name + ": missing");
            continue;
        }
        if (info->dtype != hf::DType::F32) {
            problems.push_back("tensor " + name + ": dtype " + std::string(hf::name(info->dtype)) + ", expected F32");
            continue;
        }
        const Shape shape(info->shape.begin(), info->shape.end());
        if (shape != t->shape()) {
            problems.push_back("tensor " + name + ": expected " + to_string(t->shape()) + ", got " + to_string(shape));
            continue;
        }
        infos[i] = info;
    }
    for (const auto& info : file.tensors()) {
        bool known = false;
        for (const auto& entry : state.tensors) known = known || entry.first == info.name;
        if (!known) problems.push_back("tensor " + info.name + ": unexpected (the model has no such parameter)");
    }

    if (!problems.empty()) {
        std::string message = path.string() + ": cannot load the optimiser state:";
        for (const auto& p : problems) message += "\n  " + p;
        throw hf::FormatError(message);
    }
    for (std::size_t i = 0; i < state.settings.size(); ++i) *state.settings[i].second = settings[i];
    *state.step = step;
    for (std::size_t i = 0; i < state.tensors.size(); ++i) {
        *state.tensors[i].second = file.read_float(*infos[i]);
    }
}

}  // namespace remat::train::detail
