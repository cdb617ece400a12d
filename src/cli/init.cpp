#include "src/cli/init.hpp"

#include <cstdio>

#include "models/bert/bert.hpp"
#include "models/gpt2/gpt2.hpp"
#include "remat/hf/load.hpp"
#include "src/cli/errors.hpp"

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

template <class Model>
void write(Model& model, const std::string& config_json, const InitOptions& o, const std::string& description) {
    hf::save(model, config_json, o.dir);
    std::printf("wrote %s: %s, %zu parameters, seed %llu\n", o.dir.string().c_str(), description.c_str(),
                tree::count_parameters(model), static_cast<unsigned long long>(o.seed));
}

void init_gpt2(const InitOptions& o) {
    gpt2::Config c;
    if (o.n_layer) c.n_layer = static_cast<std::size_t>(*o.n_layer);
    if (o.n_embd) c.n_embd = static_cast<std::size_t>(*o.n_embd);
    if (o.n_head) c.n_head = static_cast<std::size_t>(*o.n_head);
    if (o.vocab_size) c.vocab_size = static_cast<std::size_t>(*o.vocab_size);
    if (o.n_positions) c.n_positions = static_cast<std::size_t>(*o.n_positions);
    c.validate();
    prepare_folder(o);
    Generator init(o.seed);
    gpt2::Model model = gpt2::create(c, init);
    write(model, c.to_json(), o,
          "GPT2LMHeadModel (n_layer " + std::to_string(c.n_layer) + ", n_embd " + std::to_string(c.n_embd) +
              ", n_head " + std::to_string(c.n_head) + ", vocab_size " + std::to_string(c.vocab_size) +
              ", n_positions " + std::to_string(c.n_positions) + ")");
}

void init_bert(const InitOptions& o) {
    bert::Config c;
    if (o.n_layer) c.num_hidden_layers = static_cast<std::size_t>(*o.n_layer);
    if (o.n_embd) {
        c.hidden_size = static_cast<std::size_t>(*o.n_embd);
        c.intermediate_size = 4 * c.hidden_size;  // BERT's ratio (3072 = 4·768)
    }
    if (o.n_head) c.num_attention_heads = static_cast<std::size_t>(*o.n_head);
    if (o.vocab_size) c.vocab_size = static_cast<std::size_t>(*o.vocab_size);
    if (o.n_positions) c.max_position_embeddings = static_cast<std::size_t>(*o.n_positions);
    c.validate();
    prepare_folder(o);
    Generator init(o.seed);
    bert::Model model = bert::create(c, init);
    write(model, c.to_json(), o,
          "BertForMaskedLM (num_hidden_layers " + std::to_string(c.num_hidden_layers) + ", hidden_size " +
              std::to_string(c.hidden_size) + ", num_attention_heads " + std::to_string(c.num_attention_heads) +
              ", vocab_size " + std::to_string(c.vocab_size) + ", max_position_embeddings " +
              std::to_string(c.max_position_embeddings) + ")");
}

}  // namespace

int init(const InitOptions& o) {
    if (o.arch == "gpt2")
        init_gpt2(o);
    else if (o.arch == "bert")
        init_bert(o);
    else
        throw Failure("--arch must be gpt2 or bert, got \"" + o.arch + "\"");
    return exit_ok;
}

}  // namespace remat::cli
