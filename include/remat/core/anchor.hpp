#pragma once
// Anchor<T>: where an object lives now, for closures that must reach it after it has moved. A
// checkpointed region recomputes its block during backward; the user may have moved the model
// since the forward (or a std::vector of models may have reallocated), so the region holds the
// block's anchor, not its address. The owner re-points the anchor in its move operations and
// clears it when it dies; `get` then fails loudly instead of reading freed memory.
#include <memory>
#include <stdexcept>
#include <string>

namespace remat {

template <class T>
struct Anchor {
    T* at = nullptr;

    T& get(const char* what) const {
        if (!at)
            throw std::logic_error(std::string(what) +
                                   ": the object was destroyed (or assigned over) between the forward pass and "
                                   "backward; keep the model alive until backward has run");
        return *at;
    }
};

}  // namespace remat
