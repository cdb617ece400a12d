#include "models/build_limit.hpp"

#include "remat/core/memory_size.hpp"

namespace remat::models {

std::size_t build_limit(const hf::WeightFiles& files) {
    const std::size_t tensors = files.float32_bytes();
    const std::size_t slack = tensors / 8 + (std::size_t{16} << 20);
    return tensors > static_cast<std::size_t>(-1) - slack ? static_cast<std::size_t>(-1) : tensors + slack;
}

std::string sizes_text(const std::array<std::string, 5>& fields, const Sizes& s) {
    const std::size_t values[] = {s.n_layer, s.n_embd, s.n_head, s.vocab_size, s.n_positions};
    std::string out;
    for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? ", " : "") + fields[i] + " " + std::to_string(values[i]);
    return out;
}

ValueError larger_than_checkpoint(const hf::WeightFiles& files, const std::string& config, const std::string& sizes) {
    return ValueError(config + ": describes a model larger than " + files.description() + " holds (building it passed " +
                      readable_memory_size(build_limit(files)) + "; its " + std::to_string(files.size()) + " tensors take " +
                      readable_memory_size(files.float32_bytes()) + " as float32): check " + sizes);
}

}  // namespace remat::models
