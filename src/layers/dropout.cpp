#include "remat/layers/dropout.hpp"

#include <sstream>

#include "remat/ops/dropout.hpp"

namespace remat::nn {

Dropout Dropout::create(float p, std::shared_ptr<Generator> rng) {
    if (!(p >= 0.0f && p <= 1.0f)) throw ValueError("Dropout: p must be in [0, 1], got " + std::to_string(p));
    return {p, Mode::automatic, rng ? std::move(rng) : default_generator()};
}

std::string Dropout::describe() const {
    std::ostringstream s;
    s << "Dropout(p=" << p << ", mode=" << to_string(mode) << (rng == default_generator() ? "" : ", own generator")
      << ")";
    return s.str();
}

Var Dropout::operator()(const Var& x) const {
    if (!active()) return x;
    if (!rng) throw ValueError("Dropout: no generator");
    return ops::dropout(x, p, *rng);
}

}  // namespace remat::nn
