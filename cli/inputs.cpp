#include "cli/inputs.hpp"

#include "remat/hf/safetensors.hpp"
#include "cli/errors.hpp"

namespace remat::cli {

namespace {
std::string position(const IdTensor& t, std::size_t flat) {
    const std::size_t T = t.shape()[1];
    std::string s = "[";  // appended, not "[" + …: g++ 12 warns falsely (-Wrestrict) on that
    s += std::to_string(flat / T);
    s += ", ";
    s += std::to_string(flat % T);
    s += "]";
    return s;
}
}  // namespace

data::Batch read_batch(const std::filesystem::path& path, const InputLimits& limits, std::vector<std::string>& unused) {
    const auto file = hf::SafetensorsFile::open(path);
    const std::string where = path.string() + ": ";
    auto read = [&](const char* name, const Shape* expected) -> std::optional<IdTensor> {
        const hf::TensorInfo* t = file.find(name);
        if (!t) return std::nullopt;
        if (t->dtype != hf::DType::I64)
            throw Failure(where + "tensor \"" + name + "\" is " + std::string(hf::name(t->dtype)) + ", expected I64");
        const Shape shape(t->shape.begin(), t->shape.end());
        if (expected && shape != *expected)
            throw Failure(where + "tensor \"" + name + "\" has shape " + to_string(shape) + ", expected " +
                          to_string(*expected) + " as input_ids");
        return file.read_int(*t);
    };

    auto ids = read("input_ids", nullptr);
    if (!ids) throw Failure(where + "no tensor \"input_ids\" (the token ids, I64 of shape (B, T))");
    const Shape shape(ids->shape().begin(), ids->shape().end());
    if (shape.size() != 2)
        throw Failure(where + "tensor \"input_ids\" has shape " + to_string(shape) + ", expected (B, T)");
    if (ids->size() == 0) throw Failure(where + "tensor \"input_ids\" is empty, shape " + to_string(shape));
    if (shape[1] > limits.max_positions)
        throw Failure(where + "input_ids has " + std::to_string(shape[1]) + " tokens per sequence, more than the model's " +
                      std::to_string(limits.max_positions) + " positions");
    for (std::size_t i = 0; i < ids->size(); ++i) {
        const std::int64_t id = ids->data()[i];
        if (id < 0 || static_cast<std::size_t>(id) >= limits.vocab_size)
            throw Failure(where + "input_ids" + position(*ids, i) + " = " + std::to_string(id) +
                          " is out of range for vocab_size " + std::to_string(limits.vocab_size));
    }
    data::Batch b;
    b.ids.emplace("input_ids", std::move(*ids));

    if (auto mask = read("attention_mask", &shape)) {
        for (std::size_t i = 0; i < mask->size(); ++i) {
            const std::int64_t m = mask->data()[i];
            if (m != 0 && m != 1)
                throw Failure(where + "attention_mask" + position(*mask, i) + " = " + std::to_string(m) + ", expected 0 or 1");
        }
        b.ids.emplace("attention_mask", std::move(*mask));
    }
    if (auto types = read("token_type_ids", &shape)) {
        if (limits.type_vocab_size == 0)
            throw Failure(where + "tensor \"token_type_ids\": this model takes no token type ids");
        for (std::size_t i = 0; i < types->size(); ++i) {
            const std::int64_t t = types->data()[i];
            if (t < 0 || static_cast<std::size_t>(t) >= limits.type_vocab_size)
                throw Failure(where + "token_type_ids" + position(*types, i) + " = " + std::to_string(t) +
                              " is out of range for type_vocab_size " + std::to_string(limits.type_vocab_size));
        }
        b.ids.emplace("token_type_ids", std::move(*types));
    }
    if (auto labels = read("labels", &shape)) {
        for (std::size_t i = 0; i < labels->size(); ++i) {
            const std::int64_t l = labels->data()[i];
            if (l != -100 && (l < 0 || static_cast<std::size_t>(l) >= limits.vocab_size))
                throw Failure(where + "labels" + position(*labels, i) + " = " + std::to_string(l) +
                              " is out of range for vocab_size " + std::to_string(limits.vocab_size) +
                              " (-100 = ignore)");
        }
        b.ids.emplace("labels", std::move(*labels));
    }
    for (const hf::TensorInfo& t : file.tensors())
        if (t.name != "input_ids" && t.name != "attention_mask" && t.name != "token_type_ids" && t.name != "labels")
            unused.push_back(t.name);
    return b;
}

}  // namespace remat::cli
