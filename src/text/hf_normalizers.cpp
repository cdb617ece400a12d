#include "src/text/hf_normalizers.hpp"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "remat/core/error.hpp"
#include "remat/core/in_quotes.hpp"
#include "src/text/hf_json.hpp"
#include "src/text/tokenizer_files.hpp"

namespace remat::text::detail {

using json = nlohmann::json;

namespace {

[[noreturn]] void normalizer_icu_failed(const char* what, UErrorCode error) {
    throw Error(std::string("tokenizer: ICU failed in ") + what + ": " + u_errorName(error));
}

// NFC by ICU (Debian 12: ICU 72, Unicode 15.0), through UTF-16. Most text is NFC already: checked first.
std::string nfc(std::string text) {
    UErrorCode error = U_ZERO_ERROR;
    const UNormalizer2* form = unorm2_getNFCInstance(&error);
    if (U_FAILURE(error)) normalizer_icu_failed("loading NFC data", error);
    std::int32_t length = 0;
    u_strFromUTF8(nullptr, 0, &length, text.data(), static_cast<std::int32_t>(text.size()), &error);
    if (error != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(error)) normalizer_icu_failed("UTF-8 to UTF-16", error);
    error = U_ZERO_ERROR;
    std::u16string in(static_cast<std::size_t>(length), u'\0');
    u_strFromUTF8(in.data(), length, nullptr, text.data(), static_cast<std::int32_t>(text.size()), &error);
    if (U_FAILURE(error)) normalizer_icu_failed("UTF-8 to UTF-16", error);
    if (unorm2_isNormalized(form, in.data(), length, &error) && U_SUCCESS(error)) return text;
    error = U_ZERO_ERROR;
    std::u16string out(in.size() * 3 + 16, u'\0');  // NFC grows a text by at most 3x (Unicode's stated bound)
    const std::int32_t n = unorm2_normalize(form, in.data(), length, out.data(), static_cast<std::int32_t>(out.size()), &error);
    if (U_FAILURE(error)) normalizer_icu_failed("NFC", error);
    std::int32_t bytes = 0;
    u_strToUTF8(nullptr, 0, &bytes, out.data(), n, &error);
    if (error != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(error)) normalizer_icu_failed("UTF-16 to UTF-8", error);
    error = U_ZERO_ERROR;
    std::string utf8(static_cast<std::size_t>(bytes), '\0');
    u_strToUTF8(utf8.data(), bytes, nullptr, out.data(), n, &error);
    if (U_FAILURE(error)) normalizer_icu_failed("UTF-16 to UTF-8", error);
    return utf8;
}

void read_into(std::vector<Normalizer>& steps, const json& n, const std::string& where) {
    const std::string type = type_of(n, where);
    if (type == "Sequence") {
        const json& list = list_field(n, "normalizers", where);
        for (std::size_t i = 0; i < list.size(); ++i) read_into(steps, list[i], where + ".normalizers[" + std::to_string(i) + "]");
    } else if (type == "NFC") {
        steps.push_back(Nfc{});
    } else if (type == "Prepend") {
        steps.push_back(Prepend{string_field(n, "prepend", where)});
    } else if (type == "Replace") {
        steps.push_back(Replace{pattern_field(n, where), string_field(n, "content", where)});
    } else {
        fail(where, "normalizer " + in_quotes(type) + " is not supported (remat reads NFC, Prepend, Replace and Sequence)");
    }
}

}  // namespace

std::vector<Normalizer> read_normalizers(const json& normalizer, const std::string& where) {
    std::vector<Normalizer> steps;
    if (!normalizer.is_null()) read_into(steps, normalizer, where);
    return steps;
}

std::string replace_all(const Regex& pattern, std::string_view text, std::string_view content) {
    std::string out;
    std::size_t from = 0;
    for (const auto& [begin, end] : pattern.find_all(text)) {
        out.append(text.substr(from, begin - from));
        out.append(content);
        from = end;
    }
    out.append(text.substr(from));
    return out;
}

std::string normalize(const std::vector<Normalizer>& steps, std::string text) {
    for (const Normalizer& step : steps) {
        if (std::holds_alternative<Nfc>(step))
            text = nfc(std::move(text));
        else if (const auto* p = std::get_if<Prepend>(&step)) {
            if (!text.empty()) text.insert(0, p->prefix);
        } else if (const auto* r = std::get_if<Replace>(&step))
            text = replace_all(r->pattern, text, r->content);
    }
    return text;
}

}  // namespace remat::text::detail
