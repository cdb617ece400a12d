#include "remat/hf/weight_files.hpp"

#include <nlohmann/json.hpp>
#include <limits>
#include <unordered_map>

#include "remat/core/files.hpp"
#include "remat/core/in_quotes.hpp"
#include "src/core/strict_json.hpp"

namespace remat::hf {

namespace fs = std::filesystem;

namespace {
// Without throwing: a name the file system refuses (too long, say) is simply no file.
bool file_exists(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}
bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

// Shard file names in the order the index first mentions them, and which tensor lives where.
std::vector<std::pair<std::string, std::string>> read_index(const fs::path& index) {
    auto j = strict_json::read<nlohmann::ordered_json>(index, WeightFiles::max_index_bytes, "a weight index");
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
        throw FormatError(index.string() + ": expected an object with a \"weight_map\" object");
    std::vector<std::pair<std::string, std::string>> entries;
    for (const auto& [name, file] : j["weight_map"].items()) {
        if (!file.is_string()) throw FormatError(index.string() + ": weight_map[" + in_quotes(name) + "] is not a file name");
        const std::string f = file.get<std::string>();
        if (f.empty() || f.find('/') != std::string::npos || f.find('\\') != std::string::npos || f == "..")
            throw FormatError(index.string() + ": weight_map[" + in_quotes(name) + "] is not a plain file name: " + f);
        entries.emplace_back(name, f);
    }
    return entries;
}
}  // namespace

WeightFiles WeightFiles::open(const fs::path& dir) {
    WeightFiles c;
    auto add = [&](const fs::path& file) {
        c.files_.push_back(std::make_unique<SafetensorsFile>(SafetensorsFile::open(file)));
        for (const TensorInfo& t : c.files_.back()->tensors()) c.order_.push_back(t.name);
    };
    if (is_file(dir) && dir.extension() == ".bin") {
        c.bin_ = std::make_unique<PytorchBinFile>(PytorchBinFile::open(dir));
        for (const TensorInfo& t : c.bin_->tensors()) c.order_.push_back(t.name);
        c.description_ = dir.string();
    } else if (is_file(dir)) {
        add(dir);
        c.description_ = dir.string();
    } else if (file_exists(dir / "model.safetensors")) {
        add(dir / "model.safetensors");
        c.description_ = (dir / "model.safetensors").string();
    } else if (file_exists(dir / "model.safetensors.index.json")) {
        const fs::path index = dir / "model.safetensors.index.json";
        const auto entries = read_index(index);
        std::vector<std::string> shards;
        for (const auto& [name, file] : entries)
            if (std::find(shards.begin(), shards.end(), file) == shards.end()) shards.push_back(file);
        for (const std::string& shard : shards) {
            if (!file_exists(dir / shard)) throw FormatError(index.string() + ": shard " + shard + " is missing");
            add(dir / shard);
        }
        for (const auto& [name, file] : entries) {
            const auto at = std::find(shards.begin(), shards.end(), file) - shards.begin();
            if (!c.files_[static_cast<std::size_t>(at)]->find(name))
                throw FormatError(index.string() + ": tensor " + in_quotes(name) + " is not in its shard " + file);
        }
        c.description_ = index.string() + " (" + std::to_string(shards.size()) + " shards)";
    } else if (file_exists(dir / "pytorch_model.bin")) {
        c.bin_ = std::make_unique<PytorchBinFile>(PytorchBinFile::open(dir / "pytorch_model.bin"));
        for (const TensorInfo& t : c.bin_->tensors()) c.order_.push_back(t.name);
        c.description_ = (dir / "pytorch_model.bin").string();
    } else if (!file_exists(dir)) {
        throw FormatError(dir.string() + ": " + why_missing(dir));
    } else {
        throw FormatError(dir.string() + ": no model.safetensors, model.safetensors.index.json or pytorch_model.bin");
    }
    // A name in two shards would make loading ambiguous.
    std::vector<std::string> sorted = c.order_;
    std::sort(sorted.begin(), sorted.end());
    if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end())
        throw FormatError(c.description_ + ": tensor " + in_quotes(*dup) + " appears in more than one shard");
    return c;
}

std::vector<std::string> WeightFiles::names() const { return order_; }

std::size_t WeightFiles::float32_bytes() const {
    long double total = 0;  // saturating: a header's shapes are bounded by its file, a sum of them is not checked
    for (const std::string& name : order_) {
        long double elements = 1;
        for (std::size_t d : find(name)->shape) elements *= static_cast<long double>(d);
        total += 4 * elements;
    }
    const auto most = static_cast<long double>(std::numeric_limits<std::size_t>::max());
    return total >= most ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(total);
}

WeightFiles::Located WeightFiles::locate(const std::string& name) const {
    if (bin_) return {nullptr, bin_->find(name), bin_.get()};
    for (const auto& f : files_)
        if (const TensorInfo* t = f->find(name)) return {f.get(), t};
    return {nullptr, nullptr};
}

const TensorInfo* WeightFiles::find(const std::string& name) const { return locate(name).info; }

Tensor WeightFiles::read_float(const std::string& name) const {
    Located l = locate(name);
    if (!l.info) throw FormatError(description_ + ": no tensor " + in_quotes(name));
    if (l.bin) return l.bin->read_float(*l.info);
    return l.file->read_float(*l.info);
}

IdTensor WeightFiles::read_int(const std::string& name) const {
    Located l = locate(name);
    if (!l.info) throw FormatError(description_ + ": no tensor " + in_quotes(name));
    if (l.bin) return l.bin->read_int(*l.info);
    return l.file->read_int(*l.info);
}

}  // namespace remat::hf
