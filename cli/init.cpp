#include "cli/init.hpp"

#include <cstdio>

#include "cli/errors.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

// Refuses to overwrite a model unless asked, and fails before any work when DIR cannot be made.
void prepare_folder(const InitOptions& o) {
    std::error_code ec;
    if (fs::exists(o.dir, ec) && !fs::is_directory(o.dir, ec))
        throw Failure(o.dir.string() + ": exists and is not a folder");
    if (!o.force)
        for (const char* file : {"config.json", "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"})
            if (fs::exists(o.dir / file, ec))
                throw Failure(o.dir.string() + ": already holds a model (" + file + "); pass --force to overwrite it");
    fs::create_directories(o.dir, ec);
    if (ec) throw Failure(o.dir.string() + ": cannot create the folder: " + ec.message());
}

std::optional<std::size_t> size(const std::optional<std::int64_t>& v) {
    if (!v) return std::nullopt;
    return static_cast<std::size_t>(*v);
}

// "<HF class> (<size field> <value>, …)", the fields in the architecture's own names
std::string describe(const models::Architecture& a, const models::Sizes& s) {
    const std::size_t values[] = {s.n_layer, s.n_embd, s.n_head, s.vocab_size, s.n_positions};
    std::string out = a.hf_class + " (";
    for (std::size_t i = 0; i < a.size_fields.size(); ++i)
        out += (i ? ", " : "") + a.size_fields[i] + " " + std::to_string(values[i]);
    return out + ")";
}

}  // namespace

const models::Architecture& architecture_for_init(const std::string& arch) {
    for (const models::Architecture* a : models::architectures())
        if (a->model_type == arch) return *a;
    throw Failure("--arch must be " + models::join(models::model_types(), "or") + ", got \"" + arch + "\"");
}

int init(const InitOptions& o) {
    const models::Architecture& architecture = architecture_for_init(o.arch);
    const std::string config = architecture.config_with(
        {size(o.n_layer), size(o.n_embd), size(o.n_head), size(o.vocab_size), size(o.n_positions)});
    prepare_folder(o);
    Generator init(o.seed);
    auto model = architecture.create(config, init, nullptr, Policy::none());
    model->save(config, o.dir);
    std::printf("wrote %s: %s, %zu parameters, seed %llu\n", o.dir.string().c_str(),
                describe(architecture, architecture.summary(config).sizes).c_str(), model->count_parameters(),
                static_cast<unsigned long long>(o.seed));
    return exit_ok;
}

}  // namespace remat::cli
