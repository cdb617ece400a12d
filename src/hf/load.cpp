#include "remat/hf/load.hpp"

#include <algorithm>
#include <fstream>
#include <unistd.h>
#include <unordered_set>

#include "atomic_file.hpp"
#include "remat/core/in_quotes.hpp"

namespace remat::hf {

namespace fs = std::filesystem;

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool ignored(const std::string& name, const Naming& naming) {
    for (const auto& suffix : naming.ignored_suffixes)
        if (ends_with(name, suffix)) return true;
    for (const auto& tied : naming.tied)
        if (name == tied || ends_with(name, "." + tied)) return true;
    return false;
}

// The checkpoint's name for a model path: itself, without the base prefix, or with it.
std::string resolve(const std::string& path, const WeightFiles& files, const Naming& naming) {
    if (files.find(path)) return path;
    const std::string& p = naming.base_prefix;
    if (p.empty()) return {};
    if (starts_with(path, p) && files.find(path.substr(p.size()))) return path.substr(p.size());
    if (files.find(p + path)) return p + path;
    return {};
}

std::string shape_string(const std::vector<std::size_t>& s) { return to_string(s); }

// Problems and unused tensors named in a message; the rest are counted.
constexpr std::size_t listed = 10;

// 1234567 -> "1,234,567"
std::string with_commas(std::size_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}
}  // namespace

LoadReport load_tensors(const std::vector<NamedTensor>& targets, const WeightFiles& files, const Naming& naming) {
    std::vector<std::string> problems;
    std::unordered_set<std::string> used;
    std::vector<std::pair<const NamedTensor*, std::string>> plan;
    for (const NamedTensor& t : targets) {
        const std::string name = resolve(t.path, files, naming);
        const Shape& expected = t.tensor->shape();
        if (name.empty()) {
            problems.push_back("missing " + t.path + " (expected shape " + to_string(expected) + ")");
            continue;
        }
        used.insert(name);
        const TensorInfo* info = files.find(name);
        if (Shape(info->shape.begin(), info->shape.end()) != expected) {
            problems.push_back(t.path + ": expected shape " + to_string(expected) + ", found " +
                               shape_string(info->shape) + (name != t.path ? " (as " + name + ")" : ""));
            continue;
        }
        plan.emplace_back(&t, name);
    }
    if (!problems.empty()) {
        std::string message = files.description() + ": " + std::to_string(problems.size()) + " of " +
                              std::to_string(targets.size()) + " tensors cannot be loaded:";
        // A config of 10^5 layers over a 2-layer checkpoint misses a million tensors: name the first few.
        for (std::size_t i = 0; i < std::min(problems.size(), listed); ++i) message += "\n  " + problems[i];
        if (problems.size() > listed) message += "\n  and " + with_commas(problems.size() - listed) + " more";
        if (plan.empty() && !targets.empty())
            message += "\n  (none of the model's tensors were found: is this checkpoint for this architecture?)";
        throw LoadError(message);
    }
    // Read only once everything checks out: a failed load leaves the model as it was.
    LoadReport report;
    for (const auto& [target, name] : plan) {
        const TensorInfo* info = files.find(name);
        const bool integer = info->dtype == DType::I64 || info->dtype == DType::I32 || info->dtype == DType::I16 ||
                             info->dtype == DType::I8 || info->dtype == DType::U8;
        if (integer && !target->parameter) {  // e.g. BatchNorm's num_batches_tracked
            IdTensor v = files.read_int(name);
            Tensor f = empty(target->tensor->shape());
            for (std::size_t i = 0; i < f.size(); ++i) f.data()[i] = static_cast<float>(v.data()[i]);
            *target->tensor = std::move(f);
        } else {
            *target->tensor = files.read_float(name);
        }
        ++report.loaded;
    }
    std::vector<std::string> unused;
    for (const std::string& name : files.names())
        if (!used.count(name) && !ignored(name, naming)) unused.push_back(name);
    if (!unused.empty()) {
        std::string w = std::to_string(unused.size()) + " tensors in " + files.description() +
                        " are not used by the model:";
        for (std::size_t i = 0; i < std::min(unused.size(), listed); ++i) w += " " + in_quotes(unused[i]);
        if (unused.size() > listed) w += " and " + with_commas(unused.size() - listed) + " more";
        report.warnings.push_back(w);
    }
    return report;
}

void write_text_atomically(const fs::path& path, const std::string& text) {
    detail::AtomicFile file(path);
    file.write(std::as_bytes(std::span(text)));
    file.commit();
}

void save_tensors(const std::vector<NamedTensor>& tensors, const std::string& config_json, const fs::path& dir) {
    save_tensors(tensors, config_json, dir, "model.safetensors", "config.json");
}

void save_tensors(const std::vector<NamedTensor>& tensors, const std::string& config_json, const fs::path& dir,
                  const std::string& weights_name, const std::string& config_name) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) throw FormatError(dir.string() + ": cannot create the output folder");
    std::vector<WriteTensor> entries;
    entries.reserve(tensors.size());
    for (const NamedTensor& t : tensors) entries.push_back(f32(t.path, *t.tensor));
    // Both files are written and synced under temporary names before either is renamed: a failure or a
    // kill while writing leaves the previous pair untouched, and only the two renames remain, back to back.
    detail::AtomicFile model(dir / weights_name), config(dir / config_name);
    detail::write_safetensors(model, dir / weights_name, entries, {{"format", "pt"}});
    config.write(std::as_bytes(std::span(config_json)));
    model.finish();
    config.finish();
    model.commit();
    config.commit();
}

}  // namespace remat::hf
