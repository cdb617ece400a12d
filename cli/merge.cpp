#include "cli/merge.hpp"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/errors.hpp"
#include "cli/lora.hpp"
#include "cli/model_folder.hpp"
#include "cli/not_finite.hpp"
#include "cli/output.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

int merge(const fs::path& dir, const fs::path& adapter_dir, const fs::path& out) {
    const ModelFolder folder = inspect(dir);
    std::unique_ptr<models::Model> model = load_model(folder, Policy::none());
    const adapters::PeftAdapter adapter = attach_adapter(*model, adapter_dir);
    const std::size_t merged = model->merge_lora();
    check_parameters_finite(*model, out.string() + " not written (the merged weights)");
    const OutputFolder output = prepare_output_folder(out);  // DIR itself may be OUT: its files are written atomically
    const std::string written = save_model_folder(*model, folder, out);
    std::printf("merged %zu adapted layers of %s (r %zu, scale %g) into %s: %s\n", merged, adapter_dir.string().c_str(),
                adapter.config.r, static_cast<double>(adapter.config.scaling()), out.string().c_str(), written.c_str());
    return exit_ok;
}

}  // namespace

Command add_merge_command(CLI::App& remat) {
    struct Flags {
        std::string dir, adapter, out;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* command = remat.add_subcommand(
        "merge", "Fold a LoRA adapter into its base model (W += s·B·A) and save the plain model in HF's format");
    command->add_option("DIR", f->dir, "The base model folder the adapter was trained on")->required()->type_name("");
    command->add_option("ADIR", f->adapter, "The adapter (HF PEFT's adapter_config.json + adapter_model.safetensors)")
        ->required()
        ->type_name("");
    command->add_option("OUT", f->out, "The merged model folder to write (config.json, model.safetensors, the tokenizer's files)")
        ->required()
        ->type_name("");
    command->footer(
        "The merged model computes what the base with the adapter computes, to float rounding, at the base's\n"
        "speed; it loads anywhere a model folder does (remat, HF's from_pretrained).\n"
        "\n"
        "Example:\n"
        "  remat merge models/smollm out/adapter models/smollm-tuned");
    return {command, [f] { return merge(f->dir, f->adapter, f->out); }};
}

}  // namespace remat::cli
