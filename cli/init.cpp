#include "cli/init.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>

#include "cli/errors.hpp"
#include "cli/flags.hpp"
#include "cli/numbers.hpp"
#include "models/build_limit.hpp"
#include "remat/core/memory.hpp"
#include "remat/core/memory_size.hpp"
#include "remat/planning/memory_limit.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

// Refuses to overwrite a model unless asked, before any work.
void check_folder(const InitOptions& o) {
    std::error_code ec;
    if (fs::exists(o.dir, ec) && !fs::is_directory(o.dir, ec))
        throw Failure(o.dir.string() + ": exists and is not a folder");
    if (!o.force)
        for (const char* file : {"config.json", "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"})
            if (fs::exists(o.dir / file, ec))
                throw Failure(o.dir.string() + ": already holds a model (" + file + "); pass --force to overwrite it");
}

void make_folder(const InitOptions& o) {
    std::error_code ec;
    fs::create_directories(o.dir, ec);
    if (ec) throw Failure(o.dir.string() + ": cannot create the folder: " + ec.message());
}

std::optional<std::size_t> size(const std::optional<std::int64_t>& v) {
    if (!v) return std::nullopt;
    return static_cast<std::size_t>(*v);
}

// "<HF class> (<size field> <value>, …)", the fields in the architecture's own names
std::string describe(const models::Architecture& a, const models::Sizes& s) {
    return a.hf_class + " (" + models::sizes_text(a.size_fields, s) + ")";
}

// Builds the model in the memory this process has left: sizes that cannot fit are refused after
// allocating at most that, not after the kernel's OOM killer (or a swap storm) ends the process.
std::unique_ptr<models::Model> create_within_memory(const models::Architecture& architecture, const std::string& config,
                                                    Generator& init) {
    const planning::MemoryLimit memory = planning::memory_limit();
    const std::size_t used = memory.resident + planning::memory_margin(memory.limit);
    const std::size_t left = memory.limit > used ? memory.limit - used : 0;
    const models::Sizes s = architecture.summary(config).sizes;
    auto too_large = [&] {
        return Failure(describe(architecture, s) + " needs more than the " + readable_memory_size(left) + " of memory left (limit " +
                       readable_memory_size(memory.limit) + " from " + memory.source + ")");
    };
    // Sizes whose floats alone cannot fit are refused without building: the architecture's own count,
    // or else what every one of the table holds at least, its token embeddings and, per layer, an
    // n_embd x n_embd projection.
    const long double least =
        architecture.parameter_count
            ? 4.0L * static_cast<long double>(architecture.parameter_count(config))
            : 4.0L * (static_cast<long double>(s.vocab_size) * s.n_embd +
                      static_cast<long double>(s.n_layer) * s.n_embd * s.n_embd);
    if (least > static_cast<long double>(left)) throw too_large();
    try {
        memory::AllocationLimit limit(left);
        return architecture.create(config, init, nullptr, Policy::none());
    } catch (const memory::OverLimit&) {
        throw too_large();
    }
}

// The flags of the five sizes, in models::Sizes order.
constexpr std::array<const char*, 5> size_flags = {"--n-layer", "--n-embd", "--n-head", "--vocab-size", "--n-positions"};

// "rope_theta" -> "--rope-theta"
std::string flag_of(const std::string& field) {
    std::string flag = "--" + field;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
}

// The size request: a field behind one of the five sizes (num_hidden_layers for Llama) is that size.
models::SizeRequest request_of(const models::Architecture& a, const InitOptions& o) {
    models::SizeRequest r{size(o.n_layer), size(o.n_embd), size(o.n_head), size(o.vocab_size), size(o.n_positions), {}};
    std::optional<std::size_t>* sizes[] = {&r.n_layer, &r.n_embd, &r.n_head, &r.vocab_size, &r.n_positions};
    for (const auto& [field, value] : o.fields) {
        const auto at = std::find(a.size_fields.begin(), a.size_fields.end(), field);
        if (at == a.size_fields.end()) {
            if (std::find(a.config_fields.begin(), a.config_fields.end(), field) == a.config_fields.end())
                throw Failure(flag_of(field) + ": " + a.model_type + " configs have no field " + field);
            r.fields.emplace_back(field, value);
            continue;
        }
        const std::size_t i = static_cast<std::size_t>(at - a.size_fields.begin());
        if (*sizes[i]) throw Failure("give " + std::string(size_flags[i]) + " or " + flag_of(field) + ", not both");
        *sizes[i] = static_cast<std::size_t>(parse_count(flag_of(field), value, 1));
    }
    return r;
}

}  // namespace

const models::Architecture& architecture_for_init(const std::string& arch) {
    for (const models::Architecture* a : models::architectures())
        if (a->model_type == arch) return *a;
    throw Failure("--arch must be " + models::join(models::model_types(), "or") + ", got \"" + arch + "\"");
}

int init(const InitOptions& o) {
    const models::Architecture& architecture = architecture_for_init(o.arch);
    const std::string config = architecture.config_with(request_of(architecture, o));
    check_folder(o);
    Generator init(o.seed);
    auto model = create_within_memory(architecture, config, init);
    make_folder(o);
    model->save(config, o.dir);
    std::printf("wrote %s: %s, %zu parameters, seed %llu\n", o.dir.string().c_str(),
                describe(architecture, architecture.summary(config).sizes).c_str(), model->count_parameters(),
                static_cast<unsigned long long>(o.seed));
    return exit_ok;
}

namespace {
// "<what>: <field> (<model_type>, …), …; default: <value> (<model_type>), …" for the index-th size.
std::string size_help(const std::string& what, std::size_t index) {
    std::vector<std::pair<std::string, std::string>> fields;  // field, its model_types
    std::string defaults;
    std::vector<std::string> seen;
    for (const models::Architecture* a : models::architectures()) {
        if (std::find(seen.begin(), seen.end(), a->model_type) != seen.end()) continue;  // --arch takes the first
        seen.push_back(a->model_type);
        const models::Sizes& d = a->default_sizes;
        const std::size_t values[] = {d.n_layer, d.n_embd, d.n_head, d.vocab_size, d.n_positions};
        const std::string& field = a->size_fields[index];
        auto at = std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == field; });
        if (at == fields.end()) fields.emplace_back(field, a->model_type);
        else at->second += ", " + a->model_type;
        defaults += (defaults.empty() ? "" : ", ") + std::to_string(values[index]) + " (" + a->model_type + ")";
    }
    std::string text;
    for (const auto& [field, types] : fields) text += (text.empty() ? "" : ", ") + field + " (" + types + ")";
    return what + ": " + text + "; default: " + defaults;
}

struct InitFlags {
    InitOptions options;
    std::string dir;
    Text n_layer, n_embd, n_head, vocab_size, n_positions, seed;
    std::vector<std::pair<std::string, Text>> fields;  // every config field of the table, by HF's name
};

// Every config field of the table's architectures, each with the model_types that read it, in
// table order (the five sizes have their own flags).
std::vector<std::pair<std::string, std::string>> config_fields() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const models::Architecture* a : models::architectures()) {
        if (&architecture_for_init(a->model_type) != a) continue;
        for (const std::string& field : a->config_fields) {
            if (std::find(size_flags.begin(), size_flags.end(), flag_of(field)) != size_flags.end()) continue;
            auto at = std::find_if(out.begin(), out.end(), [&](const auto& f) { return f.first == field; });
            if (at == out.end()) out.emplace_back(field, a->model_type);
            else at->second += ", " + a->model_type;
        }
    }
    return out;
}
}  // namespace

Command add_init_command(CLI::App& remat) {
    auto f = std::make_shared<InitFlags>();
    const std::string first_type = models::model_types().front();
    CLI::App* command = remat.add_subcommand("init", "Write a randomly initialised model folder (HF's init) of any architecture");
    command->add_option("DIR", f->dir, "The model folder to write: config.json and model.safetensors")->required()->type_name("");
    std::string arch_help;
    for (const std::string& t : models::model_types())
        arch_help += (arch_help.empty() ? "" : ", ") + t + " (" + architecture_for_init(t).hf_class + ")";
    command->add_option("--arch", f->options.arch, "The model_type: " + arch_help)->required()->type_name("ARCH");
    add(command, "--n-layer", f->n_layer, size_help("Blocks", 0), "N");
    add(command, "--n-embd", f->n_embd, size_help("Hidden size", 1), "C");
    add(command, "--n-head", f->n_head, size_help("Attention heads, dividing --n-embd", 2), "H");
    add(command, "--vocab-size", f->vocab_size, size_help("Vocabulary size", 3), "V");
    add(command, "--n-positions", f->n_positions, size_help("Longest sequence", 4), "T");
    add(command, "--seed", f->seed, "Seed of the initialisation: the same seed and sizes give the same files (default: 0)",
        "S");
    command->add_flag("--force", f->options.force, "Overwrite a model already in DIR");
    const auto fields = config_fields();
    f->fields.reserve(fields.size());  // the options keep pointers into it
    for (const auto& [field, types] : fields) {
        f->fields.emplace_back(field, Text{});
        add(command, flag_of(field), f->fields.back().second, "Sets " + field + " (" + types + ")", "VALUE")
            ->group("Config fields (HF's names; a value as JSON, or a bare string)");
    }
    command->footer(
        "Weights are drawn as HuggingFace initialises each architecture (its _init_weights), from --seed. Unset\n"
        "sizes keep HF's defaults; each size sets the architecture's own config field. Any other field of the\n"
        "architecture's config.json is set by its flag: --rope-theta 500000, --tie-word-embeddings true,\n"
        "--rope-scaling '{\"rope_type\": \"linear\", \"factor\": 2}'.\n"
        "\nArchitectures it writes (--arch):\n" +
        architecture_lines([](const auto& a) { return &a == &architecture_for_init(a.model_type); }) +
        "\n"
        "Example:\n"
        "  remat init tiny --arch " + first_type + " --n-layer 4 --n-embd 128 --n-head 4 --vocab-size 256 --n-positions 128 --seed 1");
    return {command, [f] {
                InitOptions o = f->options;
                o.dir = f->dir;
                o.n_layer = count_if_given("--n-layer", f->n_layer, 1);
                o.n_embd = count_if_given("--n-embd", f->n_embd, 1);
                o.n_head = count_if_given("--n-head", f->n_head, 1);
                o.vocab_size = count_if_given("--vocab-size", f->vocab_size, 1);
                o.n_positions = count_if_given("--n-positions", f->n_positions, 1);
                if (f->seed.given()) o.seed = static_cast<std::uint64_t>(parse_count("--seed", f->seed.value, 0));
                for (const auto& [field, text] : f->fields)
                    if (text.given()) o.fields.emplace_back(field, text.value);
                return init(o);
            }};
}

}  // namespace remat::cli
