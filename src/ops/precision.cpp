#include "remat/ops/precision.hpp"

#include <string>

#include "mixed.hpp"
#include "remat/core/error.hpp"

namespace remat {

namespace {
Precision& setting() {
    thread_local Precision p = Precision::fp32;
    return p;
}
ops::detail::Bf16Cache*& cache_slot() {
    thread_local ops::detail::Bf16Cache* cache = nullptr;
    return cache;
}
}  // namespace

Precision precision() { return setting(); }

Precision parse_precision(std::string_view text) {
    if (text == "fp32") return Precision::fp32;
    if (text == "bf16") return Precision::bf16;
    throw ValueError("unknown precision '" + std::string(text) + "': expected fp32 or bf16");
}

std::string_view name(Precision p) { return p == Precision::bf16 ? "bf16" : "fp32"; }

Autocast::Autocast(Precision p) : previous_(setting()), outer_cache_(cache_slot()) {
    setting() = p;
    if (p == Precision::bf16) {
        cache_ = std::make_unique<ops::detail::Bf16Cache>();
        cache_slot() = cache_.get();
    }
}

Autocast::~Autocast() {
    setting() = previous_;
    cache_slot() = outer_cache_;
}

namespace detail {
Precision exchange_precision(Precision p) { return std::exchange(setting(), p); }
}  // namespace detail

namespace ops::detail {
Bf16Cache* current_bf16_cache() { return cache_slot(); }
}  // namespace ops::detail

}  // namespace remat
