#include <memory>

#include "remat/core/files.hpp"
#include "cli/flags.hpp"
#include "cli/info.hpp"

#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "remat/core/in_quotes.hpp"
#include "remat/hf/weight_files.hpp"
#include "cli/errors.hpp"
#include "cli/model_folder.hpp"


namespace remat::cli {

namespace fs = std::filesystem;

namespace {
// A config value as written in config.json; floats as the shortest text that reads back the same
// float32 (1e-05, not 9.999999747378752e-06).
std::string value_text(const nlohmann::json& v) {
    if (v.is_number_float()) {
        char buffer[32];
        const auto r = std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(v.get<double>()));
        return std::string(buffer, r.ptr);
    }
    if (v.is_string()) return printable(v.get<std::string>(), 200);
    return v.dump();
}

int info_file(const fs::path& path) {
    const auto file = hf::SafetensorsFile::open(path);
    std::size_t bytes = 0;
    for (const hf::TensorInfo& t : file.tensors()) bytes += t.end - t.begin;
    std::printf("file: %s\n", printable(path.string()).c_str());
    std::printf("tensors: %zu (%zu bytes of data)\n", file.tensors().size(), bytes);
    for (const hf::TensorInfo& t : file.tensors())
        std::printf("  %s %s %s [%zu, %zu)\n", printable(t.name).c_str(), std::string(hf::name(t.dtype)).c_str(),
                    to_string(t.shape).c_str(), t.begin, t.end);
    if (file.metadata().empty()) {
        std::printf("metadata: none\n");
    } else {
        std::printf("metadata:\n");
        for (const auto& [key, value] : file.metadata()) std::printf("  %s: %s\n", printable(key).c_str(), printable(value).c_str());
    }
    return exit_ok;
}

int info_folder(const fs::path& dir) {
    const ModelFolder folder = inspect(dir);
    const nlohmann::json config = nlohmann::json::parse(folder.architecture->fields(folder.config_text));
    // Load first: nothing is printed for a model that cannot be loaded.
    hf::LoadReport report;
    const std::size_t parameters = load_model(folder, Policy::none(), nullptr, &report)->count_parameters();
    const auto files = hf::WeightFiles::open(dir);

    std::printf("model: %s\n", printable(dir.string()).c_str());
    std::printf("architecture: %s\n", folder.architecture->hf_class.c_str());
    std::printf("config: %s\n", folder.config.string().c_str());
    std::printf("  model_type: %s\n", value_text(config["model_type"]).c_str());
    for (const auto& [key, value] : config.items())
        if (key != "model_type") std::printf("  %s: %s\n", key.c_str(), value_text(value).c_str());
    const auto names = files.names();
    std::printf("checkpoint: %s (%zu tensors)\n", files.description().c_str(), names.size());
    for (const std::string& n : names) {
        const hf::TensorInfo* t = files.find(n);
        std::printf("  %s %s %s\n", printable(n).c_str(), std::string(hf::name(t->dtype)).c_str(), to_string(t->shape).c_str());
    }
    std::printf("parameters: %zu\n", parameters);
    for (const std::string& w : report.warnings) print_warning(w);
    return exit_ok;
}
}  // namespace

int info(const fs::path& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw Failure(path.string() + ": " + why_missing(path));
    return fs::is_directory(path, ec) ? info_folder(path) : info_file(path);
}

Command add_info_command(CLI::App& remat) {
    auto path = std::make_shared<std::string>();
    CLI::App* command = remat.add_subcommand(
        "info", "Describe a model folder (architecture, config, checkpoint tensors, parameter count) or a .safetensors file");
    command->add_option("PATH", *path, "A model folder (config.json + model.safetensors) or a .safetensors file")
        ->required()
        ->type_name("");
    command->footer(all_architectures() + "\nExample:\n  remat info models/" + models::model_types().front() +
                    "          # prints e.g. \"parameters: 124439808\"");
    return {command, [path] { return info(*path); }};
}

}  // namespace remat::cli
