#include "remat/train/state_file.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

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

void read_state_files(std::span<const std::filesystem::path> paths, const LoadedState& state) {
    if (paths.empty()) throw std::invalid_argument("read_state_files: no files");
    std::vector<hf::SafetensorsFile> files;
    for (const std::filesystem::path& path : paths) files.push_back(hf::SafetensorsFile::open(path));
    // Problems name the file they are in when there are several.
    const auto in_file = [&](std::size_t f) { return paths.size() > 1 ? paths[f].filename().string() + ": " : std::string(); };
    std::vector<std::string> problems;

    std::int64_t step = 0;
    std::vector<float> settings(state.settings.size());
    for (std::size_t f = 0; f < files.size(); ++f) {
        const auto& metadata = files[f].metadata();
        const std::string& path = paths[f].string();
        const std::string* format = find(metadata, format_key);
        if (!format || *format != format_value)
            throw hf::FormatError(path + ": not a remat optimiser state (metadata \"format\" is " +
                                  (format ? in_quotes(*format) : std::string("missing")) + ")");
        const std::string* rule = find(metadata, "rule");
        if (!rule || *rule != state.rule)
            throw hf::FormatError(path + ": the state of rule " + (rule ? *rule : std::string("(none)")) + ", loading into " + state.rule);

        std::int64_t file_step = 0;
        const std::string* step_text = find(metadata, "step");
        if (!step_text || !parse_whole(*step_text, file_step) || file_step < 0)
            problems.push_back(in_file(f) + "step: " + (step_text ? in_quotes(*step_text) + " is not a step count" : std::string("missing")));
        else if (f > 0 && file_step != step)
            problems.push_back(in_file(f) + "step " + *step_text + ", " + in_file(0) + "step " + std::to_string(step));
        if (f == 0) step = file_step;

        for (std::size_t i = 0; i < state.settings.size(); ++i) {
            const std::string& name = state.settings[i].first;
            const std::string* text = find(metadata, name);
            float value = 0;
            if (!text)
                problems.push_back(in_file(f) + "setting " + name + ": missing");
            else if (!parse_whole(*text, value))
                problems.push_back(in_file(f) + "setting " + name + ": " + in_quotes(*text) + " is not a number");
            else if (f > 0 && std::memcmp(&value, &settings[i], sizeof value) != 0)
                problems.push_back(in_file(f) + "setting " + name + " " + *text + ", " + in_file(0) + exact_text(settings[i]));
            if (f == 0) settings[i] = value;
        }
        for (const auto& [key, value] : metadata) {
            bool known = std::find(std::begin(reserved_keys), std::end(reserved_keys), key) != std::end(reserved_keys);
            for (const auto& setting : state.settings) known = known || setting.first == key;
            if (!known) problems.push_back(in_file(f) + "setting " + key + ": not a setting of " + state.rule);
        }
    }

    // Where each tensor of the files is: every name in one file only, and a moment of the model's.
    std::map<std::string, std::pair<std::size_t, const hf::TensorInfo*>> found;
    const std::set<std::string> elsewhere(state.elsewhere.begin(), state.elsewhere.end());
    std::set<std::string> loaded;
    for (const auto& entry : state.tensors) loaded.insert(entry.first);
    for (std::size_t f = 0; f < files.size(); ++f)
        for (const hf::TensorInfo& info : files[f].tensors()) {
            if (!loaded.contains(info.name) && !elsewhere.contains(info.name))
                problems.push_back(in_file(f) + "tensor " + info.name + ": unexpected (the model has no such parameter)");
            else if (const auto [at, added] = found.try_emplace(info.name, f, &info); !added)
                problems.push_back(in_file(f) + "tensor " + info.name + ": also in " + paths[at->second.first].filename().string());
        }
    std::vector<std::pair<std::size_t, const hf::TensorInfo*>> sources(state.tensors.size(), {0, nullptr});
    for (std::size_t i = 0; i < state.tensors.size(); ++i) {
        const auto& [name, t] = state.tensors[i];
        const auto at = found.find(name);
        if (at == found.end()) {
            problems.push_back("tensor " + name + ": missing");
            continue;
        }
        const auto [f, info] = at->second;
        if (info->dtype != hf::DType::F32) {
            problems.push_back(in_file(f) + "tensor " + name + ": dtype " + std::string(hf::name(info->dtype)) + ", expected F32");
            continue;
        }
        const Shape shape(info->shape.begin(), info->shape.end());
        if (shape != t->shape()) {
            problems.push_back(in_file(f) + "tensor " + name + ": expected " + to_string(t->shape()) + ", got " + to_string(shape));
            continue;
        }
        sources[i] = at->second;
    }

    if (!problems.empty()) {
        const std::string what = paths.size() == 1 ? paths[0].string()
                                                   : paths[0].parent_path().string() + " (" + std::to_string(paths.size()) + " optimiser files)";
        std::string message = what + ": cannot load the optimiser state:";
        for (const auto& p : problems) message += "\n  " + p;
        throw hf::FormatError(message);
    }
    for (std::size_t i = 0; i < state.settings.size(); ++i) *state.settings[i].second = settings[i];
    *state.step = step;
    for (std::size_t i = 0; i < state.tensors.size(); ++i)
        *state.tensors[i].second = files[sources[i].first].read_float(*sources[i].second);
}

}  // namespace remat::train::detail
