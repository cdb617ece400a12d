#include "src/core/strict_json.hpp"

#include <unordered_set>
#include <utility>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/core/files.hpp"
#include "remat/core/in_quotes.hpp"

namespace remat::strict_json {

namespace {

// "[json.exception.parse_error.101] parse error at line 1, …" -> "parse error at line 1, …"
std::string without_prefix(std::string what) {
    if (auto bracket = what.find("] "); what.starts_with("[json.exception.") && bracket != std::string::npos)
        what.erase(0, bracket + 2);
    return what;
}

// A key for a path in a message: escaped as in_quotes does, without the quotes.
std::string escaped(const std::string& key) {
    std::string q = in_quotes(key, 80);
    return q.substr(1, q.size() - 2);
}

// Builds the value from nlohmann's SAX events (its parser is iterative; only the DOM it would build
// itself is unbounded), refusing what parse() documents.
template <class Json>
class Builder final : public nlohmann::json_sax<Json> {
public:
    using typename nlohmann::json_sax<Json>::number_integer_t;
    using typename nlohmann::json_sax<Json>::number_unsigned_t;
    using typename nlohmann::json_sax<Json>::number_float_t;
    using typename nlohmann::json_sax<Json>::string_t;
    using typename nlohmann::json_sax<Json>::binary_t;

    Json root;
    std::string problem;  // why parsing stopped
    std::size_t syntax_byte = 0;

    bool null() override { return put(Json(nullptr)); }
    bool boolean(bool v) override { return put(Json(v)); }
    bool number_integer(number_integer_t v) override { return put(Json(v)); }
    bool number_unsigned(number_unsigned_t v) override { return put(Json(v)); }
    bool number_float(number_float_t v, const string_t&) override { return put(Json(v)); }
    bool string(string_t& v) override { return put(Json(std::move(v))); }
    bool binary(binary_t&) override { return put(Json(nullptr)); }  // the JSON parser never calls it

    bool start_object(std::size_t) override { return open(Json::object()); }
    bool start_array(std::size_t) override { return open(Json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }

    bool key(string_t& k) override {
        Open& object = open_.back();
        if (!object.keys.insert(k).second) {
            problem = "duplicate key " + in_quotes(k) + where();
            return false;
        }
        key_ = std::move(k);
        return true;
    }

    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
        problem = "not valid JSON: " + without_prefix(e.what());
        syntax_byte = position;
        return false;
    }

private:
    struct Open {
        Json* value;
        std::string name;                      // how where() names it: "vocab", "[3]"
        std::unordered_set<std::string> keys;  // of an object
    };
    std::vector<Open> open_;
    std::string key_;

    // " in model.vocab" for a key inside root["model"]["vocab"]; "" at the top level.
    std::string where() const {
        std::string path;
        for (std::size_t i = 1; i < open_.size(); ++i)
            path += (path.empty() || open_[i].name.starts_with('[') ? "" : ".") + open_[i].name;
        return path.empty() ? std::string() : " in " + path;
    }

    // Appends v to the innermost open container (or makes it the root) and returns where it lives,
    // with the name where() gives it. The address stays valid while v is open: its parent gets no new
    // member until v is closed.
    std::pair<Json*, std::string> insert(Json v) {
        if (open_.empty()) {
            root = std::move(v);
            return {&root, {}};
        }
        Json& parent = *open_.back().value;
        if (parent.is_array()) {
            auto& elements = parent.template get_ref<typename Json::array_t&>();
            elements.push_back(std::move(v));
            return {&elements.back(), "[" + std::to_string(elements.size() - 1) + "]"};
        }
        auto& members = parent.template get_ref<typename Json::object_t&>();
        std::string name = escaped(key_);
        if constexpr (requires { typename Json::object_t::Container; }) {
            // ordered_map's own insert searches linearly; keys are already known to be unique.
            auto& list = static_cast<typename Json::object_t::Container&>(members);
            list.emplace_back(std::move(key_), std::move(v));
            return {&list.back().second, std::move(name)};
        } else {
            return {&members.emplace(std::move(key_), std::move(v)).first->second, std::move(name)};
        }
    }
    bool put(Json v) {
        insert(std::move(v));
        return true;
    }
    bool open(Json container) {
        if (open_.size() == max_depth) {
            problem = "nested deeper than " + std::to_string(max_depth) + " levels";
            return false;
        }
        auto [value, name] = insert(std::move(container));
        open_.push_back({value, std::move(name), {}});
        return true;
    }
    bool close() {
        open_.pop_back();
        return true;
    }
};

}  // namespace

template <class Json>
Json parse(std::string_view text, const std::string& source) {
    if (std::size_t nul = text.find('\0'); nul != std::string_view::npos)
        throw Error(source + ": not valid JSON: NUL byte at offset " + std::to_string(nul), 0);
    Builder<Json> builder;
    if (!Json::sax_parse(text.begin(), text.end(), &builder, Json::input_format_t::json, /*strict=*/true,
                         /*ignore_comments=*/false))
        throw Error(source + ": " + builder.problem, builder.syntax_byte);
    return std::move(builder.root);
}

template <class Json>
Json read(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what) {
    return parse<Json>(read_file(path, max_bytes, what), path.string());
}

template nlohmann::json parse<nlohmann::json>(std::string_view, const std::string&);
template nlohmann::ordered_json parse<nlohmann::ordered_json>(std::string_view, const std::string&);
template nlohmann::json read<nlohmann::json>(const std::filesystem::path&, std::size_t, std::string_view);
template nlohmann::ordered_json read<nlohmann::ordered_json>(const std::filesystem::path&, std::size_t, std::string_view);

}  // namespace remat::strict_json
