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
// itself is unbounded), refusing what parse() documents and handing streamed containers' members over.
template <class Json>
class Builder final : public nlohmann::json_sax<Json> {
public:
    using typename nlohmann::json_sax<Json>::number_integer_t;
    using typename nlohmann::json_sax<Json>::number_unsigned_t;
    using typename nlohmann::json_sax<Json>::number_float_t;
    using typename nlohmann::json_sax<Json>::string_t;
    using typename nlohmann::json_sax<Json>::binary_t;

    explicit Builder(std::span<Streamed<Json>> streamed) : streamed_(streamed) {}

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
        if (!(object.stream && object.stream->take_refuses_repeats) && !object.keys.insert(k).second) {
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
    // Where a value sits in its parent: a member's key or an element's index. Named only for messages.
    struct Place {
        std::string key;  // of an object's member
        std::size_t index = 0;
        bool element = false;  // of an array
        std::string name() const { return element ? "[" + std::to_string(index) + "]" : escaped(key); }
    };
    struct Open {
        Json* value;
        Place place;
        std::unordered_set<std::string> keys;  // of an object
        Streamed<Json>* stream = nullptr;      // members go to stream->take instead of into value
        std::size_t count = 0;                 // members so far
    };
    std::span<Streamed<Json>> streamed_;
    std::vector<Open> open_;
    std::string key_;
    Json member_;  // a streamed container's member while it is being built

    // " in model.vocab" for a key inside root["model"]["vocab"]; "" at the top level.
    std::string where() const {
        std::string path;
        for (std::size_t i = 1; i < open_.size(); ++i) path += dotted(path, open_[i].place);
        return path.empty() ? std::string() : " in " + path;
    }
    static std::string dotted(const std::string& path, const Place& place) {
        return (path.empty() || place.element ? "" : ".") + place.name();
    }

    // Where the next value goes in the innermost open container.
    Place next_place() {
        if (open_.empty()) return {};
        Open& parent = open_.back();
        const bool element = !parent.value->is_object();
        Place place{element ? std::string() : std::move(key_), parent.count++, element};
        return place;
    }

    // Appends v to the innermost open container (or makes it the root, or hands it to a stream when
    // complete) and returns where it lives. The address stays valid while v is open: its parent gets no
    // new member until v is closed.
    Json* insert(Json v, const Place& place) {
        if (open_.empty()) {
            root = std::move(v);
            return &root;
        }
        Open& parent = open_.back();
        if (parent.stream) {
            member_ = std::move(v);
            if (member_.is_structured()) return &member_;  // handed over when it closes
            hand_over(parent, place);
            return nullptr;
        }
        if (parent.value->is_array()) {
            auto& elements = parent.value->template get_ref<typename Json::array_t&>();
            elements.push_back(std::move(v));
            return &elements.back();
        }
        auto& members = parent.value->template get_ref<typename Json::object_t&>();
        if constexpr (requires { typename Json::object_t::Container; }) {
            // ordered_map's own insert searches linearly; keys are already known to be unique.
            auto& list = static_cast<typename Json::object_t::Container&>(members);
            list.emplace_back(place.key, std::move(v));
            return &list.back().second;
        } else {
            return &members.emplace(place.key, std::move(v)).first->second;
        }
    }
    void hand_over(Open& parent, const Place& place) {
        parent.stream->take(place.element ? nullptr : &place.key, place.index, std::move(member_));
        member_ = Json();
    }
    bool put(Json v) {
        insert(std::move(v), next_place());
        return true;
    }
    bool open(Json container) {
        if (open_.size() == max_depth) {
            problem = "nested deeper than " + std::to_string(max_depth) + " levels";
            return false;
        }
        Place place = next_place();
        Streamed<Json>* stream = nullptr;
        if (!streamed_.empty() && !open_.empty() && !open_.back().stream && open_.size() <= 3) {
            std::string path;
            for (std::size_t i = 1; i < open_.size(); ++i) path += dotted(path, open_[i].place);
            path += dotted(path, place);
            for (Streamed<Json>& s : streamed_)
                if (s.path == path && s.object == container.is_object()) stream = &s, s.seen = true;
        }
        Json* value = insert(std::move(container), place);
        open_.push_back({value, std::move(place), {}, stream});
        return true;
    }
    bool close() {
        Open closed = std::move(open_.back());
        open_.pop_back();
        if (!open_.empty() && open_.back().stream) hand_over(open_.back(), closed.place);
        return true;
    }
};

}  // namespace

template <class Json>
Json parse(std::string_view text, const std::string& source, std::span<Streamed<Json>> streamed) {
    if (std::size_t nul = text.find('\0'); nul != std::string_view::npos)
        throw Error(source + ": not valid JSON: NUL byte at offset " + std::to_string(nul), 0);
    Builder<Json> builder(streamed);
    if (!Json::sax_parse(text.begin(), text.end(), &builder, Json::input_format_t::json, /*strict=*/true,
                         /*ignore_comments=*/false))
        throw Error(source + ": " + builder.problem, builder.syntax_byte);
    return std::move(builder.root);
}

template <class Json>
Json read(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what) {
    return parse<Json>(read_file(path, max_bytes, what), path.string());
}

template nlohmann::json parse<nlohmann::json>(std::string_view, const std::string&, std::span<Streamed<nlohmann::json>>);
template nlohmann::ordered_json parse<nlohmann::ordered_json>(std::string_view, const std::string&,
                                                              std::span<Streamed<nlohmann::ordered_json>>);
template nlohmann::json read<nlohmann::json>(const std::filesystem::path&, std::size_t, std::string_view);
template nlohmann::ordered_json read<nlohmann::ordered_json>(const std::filesystem::path&, std::size_t, std::string_view);

}  // namespace remat::strict_json
