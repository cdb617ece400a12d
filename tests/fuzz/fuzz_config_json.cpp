// libFuzzer target: the config.json readers of GPT-2 and BERT (models/common/config_json.hpp). Every
// input must give a Config that validates, or a remat::ValueError; anything else is a finding.
// Accepted configs must survive to_json() and read back equal. Seeds: corpus/config_json/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/bert/config.hpp"
#include "models/gpt2/config.hpp"
#include "remat/core/error.hpp"

using namespace remat;

namespace {
template <class Config>
void check(const std::string& text) {
    try {
        const Config c = Config::from_json(text, "config.json");
        c.validate();
        const Config again = Config::from_json(c.to_json(), "to_json()");
        if (again.to_json() != c.to_json()) __builtin_trap();
    } catch (const ValueError&) {
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    check<gpt2::Config>(text);
    check<bert::Config>(text);
    return 0;
}
