#pragma once
// A model's config.json, declared once as a list of fields: each field's HF name, the Config
// member it fills, what values it takes. One schema reads config.json (messages name the file and
// the field), validates a Config (messages name the field) and writes it back (private to models/).
//
//   const config_json::Schema<Config> schema = config_json::Schema<Config>("GPT-2 config", "gpt2", "GPT2LMHeadModel")
//       .size("vocab_size", &Config::vocab_size, Rule::positive).required()
//       .real("resid_pdrop", &Config::resid_pdrop, Rule::probability)
//       .activation("activation_function", &Config::activation_function);
//
// Scalars are doubles, so a 0.1 read from a config is written back as 0.1. A field absent from the
// file (or null, where the field allows it) keeps the value of a default-constructed Config.
#include <functional>
#include <string>
#include <vector>

#include "models/common/config_file.hpp"
#include "models/common/config_json.hpp"
#include "remat/core/in_quotes.hpp"
#include "remat/layers/activation.hpp"

namespace remat::config_json {

// What values a field takes beyond its type.
// positive_or_null: a size that null (or absence) leaves to a default, and that is never 0 when given
// (head_dim, num_key_value_heads, sliding_window: HF would divide by it, or attend to nothing).
enum class Rule { any, positive, positive_or_null, probability };

// Every size field (a dimension, a count, a token id) is at most 2^24 = 16,777,216: above any real
// model's (vocabularies reach 256 k, hidden sizes 16 k, contexts of learned positions 8 k), and low
// enough that a product of two never overflows a byte count. What a model of such sizes would
// allocate is bounded by models::load against the checkpoint.
inline constexpr std::size_t max_size = std::size_t{1} << 24;

template <class C>
class Schema {
public:
    // `what` starts validation messages: "GPT-2 config: n_head must be positive". model_type and the
    // HF class are written into config.json.
    Schema(std::string what, std::string model_type, std::string hf_class)
        : what_(std::move(what)), model_type_(std::move(model_type)), hf_class_(std::move(hf_class)) {}

    // A non-negative integer, at most max_size.
    Schema& size(const char* name, std::size_t C::*member, Rule rule = Rule::any) {
        Field f{name};
        f.read = [member, rule](C& c, const json& v, const std::string& key, const std::string& source) {
            if (!v.is_number_unsigned())  // negative integers are number_integer only
                throw ValueError(source + ": " + key + " must be a non-negative integer, got " + shown(v));
            if (rule == Rule::positive_or_null && v.template get<std::size_t>() == 0)
                throw ValueError(source + ": " + key + " must be a positive integer or null, got 0");
            c.*member = v.template get<std::size_t>();
        };
        f.write = [member](const C& c) { return json(c.*member); };
        if (rule == Rule::positive_or_null) f.nullable = true;
        f.check = [member, rule, name = std::string(name)](const C& c, const std::string& what) {
            if (rule == Rule::positive && c.*member == 0) throw ValueError(what + ": " + name + " must be positive, got 0");
            if (c.*member > max_size)
                throw ValueError(what + ": " + name + " = " + std::to_string(c.*member) + " is over the limit of " +
                                 std::to_string(max_size));
        };
        return add(std::move(f));
    }
    // A number; absent or null keeps the default.
    Schema& real(const char* name, double C::*member, Rule rule = Rule::any) {
        Field f{name};
        f.nullable = true;
        f.read = [member](C& c, const json& v, const std::string& key, const std::string& source) {
            if (!v.is_number()) throw ValueError(source + ": " + key + " must be a number, got " + shown(v));
            c.*member = v.template get<double>();
        };
        f.write = [member](const C& c) { return json(c.*member); };
        if (rule != Rule::any)
            f.check = [member, rule, name = std::string(name)](const C& c, const std::string& what) {
                const double x = c.*member;
                if (rule == Rule::positive && !(x > 0)) throw ValueError(what + ": " + name + " must be positive, got " + number_text(x));
                if (rule == Rule::probability && !(x >= 0 && x <= 1))
                    throw ValueError(what + ": " + name + " must be in [0, 1], got " + number_text(x));
            };
        return add(std::move(f));
    }
    // An activation by HF's name (nn::parse_activation).
    Schema& activation(const char* name, nn::Activation C::*member) {
        Field f{name};
        f.read = [member](C& c, const json& v, const std::string& key, const std::string& source) {
            if (!v.is_string()) throw ValueError(source + ": " + key + " must be a string");
            const auto a = nn::parse_activation(v.get<std::string>());
            if (!a)
                throw ValueError(source + ": unsupported " + key + " " + in_quotes(v.get<std::string>()) + " (" +
                                 nn::activation_names() + ")");
            c.*member = *a;
        };
        f.write = [member](const C& c) { return json(nn::name(c.*member)); };
        return add(std::move(f));
    }
    // true or false.
    Schema& flag(const char* name, bool C::*member) {
        Field f{name};
        f.read = [member](C& c, const json& v, const std::string& key, const std::string& source) {
            if (!v.is_boolean()) throw ValueError(source + ": " + key + " must be true or false, got " + shown(v));
            c.*member = v.template get<bool>();
        };
        f.write = [member](const C& c) { return json(c.*member); };
        return add(std::move(f));
    }
    // A field read and written by the architecture's own functions (an object such as rope_scaling);
    // read throws ValueError "<source>: <key> …". Null keeps the default.
    using Reader = std::function<void(C&, const json& value, const std::string& key, const std::string& source)>;
    Schema& custom(const char* name, Reader read, std::function<json(const C&)> write) {
        Field f{name};
        f.nullable = true;
        f.read = std::move(read);
        f.write = std::move(write);
        return add(std::move(f));
    }
    // A string remat supports only one value of: "position_embedding_type" must be "absolute".
    Schema& only(const char* name, const char* value) {
        Field f{name};
        f.read = [value](C&, const json& v, const std::string& key, const std::string& source) {
            if (v != value)
                throw ValueError(source + ": unsupported " + key + " " + shown(v) + " (only \"" + value + "\")");
        };
        f.write = [value](const C&) { return json(value); };
        return add(std::move(f));
    }

    // A field only written, computed from the others: HF's "bos_token_id".
    Schema& computed(const char* name, std::function<json(const C&)> value) {
        return computed_.emplace_back(name, std::move(value)), *this;
    }

    // Modifiers of the field declared last.
    Schema& required() { return last().required = true, *this; }
    Schema& nullable() { return last().nullable = true, *this; }  // null keeps the default
    Schema& alias(const char* older_name) { return last().aliases.push_back(older_name), *this; }
    Schema& null_when_zero() {  // written as null when 0 (HF's "n_inner": null)
        Field& f = last();
        f.nullable = true;
        f.write = [write = f.write](const C& c) {
            json v = write(c);
            return v == json(0) ? json(nullptr) : v;
        };
        return *this;
    }
    // Written as `value` computes it (HF's head_dim: the head size, also where the file said null).
    Schema& written(std::function<json(const C&)> value) { return last().write = std::move(value), *this; }
    // A check across fields, run after the fields' own: throws ValueError(what + ": …").
    Schema& check(std::function<void(const C&, const std::string& what)> f) { return checks_.push_back(std::move(f)), *this; }

    // The Config config.json text describes: every required field present (in declaration order),
    // each value of the right kind, then validate(); errors are "<source>: …".
    C read(const std::string& text, const std::string& source) const {
        const json j = parse_object(text, source);
        for (const Field& f : fields_)
            if (f.required && !find(j, f)) {
                std::string names = f.name;
                for (const std::string& a : f.aliases) names += " (or " + a + ")";
                throw ValueError(source + ": missing field " + names);
            }
        C c;
        for (const Field& f : fields_) {
            const auto [key, value] = find(j, f);
            if (!value || (value->is_null() && f.nullable)) continue;
            f.read(c, *value, key, source);
        }
        try {
            validate(c);
        } catch (const ValueError& e) {
            throw ValueError(source + ": " + e.message());
        }
        return c;
    }

    // Throws ValueError "<what>: <field> …" for the first field (or check) a Config fails.
    void validate(const C& c) const {
        for (const Field& f : fields_)
            if (f.check) f.check(c, what_);
        for (const auto& check : checks_) check(c, what_);
    }

    // config.json: every field under its name and its older names, the computed ones, model_type
    // and architectures.
    std::string to_json(const C& c) const {
        json j = fields(c);
        for (const Field& f : fields_)
            for (const std::string& a : f.aliases) j[a] = j[f.name];
        for (const auto& [name, value] : computed_) j[name] = value(c);
        j["architectures"] = {hf_class_};
        return j.dump(2) + "\n";
    }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const Field& f : fields_) out.push_back(f.name);
        return out;
    }
    // The fields remat reads, and model_type.
    json fields(const C& c) const {
        json j = json::object();
        for (const Field& f : fields_) j[f.name] = f.write(c);
        j["model_type"] = model_type_;
        return j;
    }

private:
    struct Field {
        std::string name;
        std::vector<std::string> aliases{};
        bool required = false, nullable = false;
        std::function<void(C&, const json& value, const std::string& key, const std::string& source)> read{};
        std::function<json(const C&)> write{};
        std::function<void(const C&, const std::string& what)> check{};
    };
    struct Found {
        std::string key;
        const json* value = nullptr;
        explicit operator bool() const { return value != nullptr; }
    };

    static Found find(const json& j, const Field& f) {
        if (auto it = j.find(f.name); it != j.end()) return {f.name, &*it};
        for (const std::string& a : f.aliases)
            if (auto it = j.find(a); it != j.end()) return {a, &*it};
        return {};
    }
    Schema& add(Field f) { return fields_.push_back(std::move(f)), *this; }
    Field& last() { return fields_.back(); }

    std::string what_, model_type_, hf_class_;
    std::vector<Field> fields_;
    std::vector<std::pair<std::string, std::function<json(const C&)>>> computed_;
    std::vector<std::function<void(const C&, const std::string&)>> checks_;
};

}  // namespace remat::config_json

namespace remat::models {

template <class C>
C ConfigFile<C>::from_json(const std::string& text, const std::string& source) {
    return C::schema().read(text, source);
}
template <class C>
C ConfigFile<C>::from_file(const std::filesystem::path& path) {
    return from_json(config_json::read_file(path), path.string());
}
template <class C>
void ConfigFile<C>::validate() const {
    C::schema().validate(static_cast<const C&>(*this));
}
template <class C>
std::string ConfigFile<C>::to_json() const {
    return C::schema().to_json(static_cast<const C&>(*this));
}
template <class C>
std::string ConfigFile<C>::fields_json() const {
    return C::schema().fields(static_cast<const C&>(*this)).dump();
}
template <class C>
std::vector<std::string> ConfigFile<C>::field_names() {
    return C::schema().names();
}

}  // namespace remat::models
