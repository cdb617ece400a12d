#include "remat/ad/backend.hpp"

#include "remat/ad/tape.hpp"

namespace remat::ad {
namespace {
thread_local Backend* override_backend = nullptr;
}

std::string_view name(OpKind kind) {
    switch (kind) {
        case OpKind::matmul: return "matmul";
        case OpKind::projection: return "projection";
        case OpKind::narrowing: return "narrowing projection";
        case OpKind::attention: return "attention";
        case OpKind::softmax: return "softmax";
        case OpKind::norm: return "norm";
        case OpKind::activation: return "activation";
        case OpKind::elementwise: return "elementwise";
        case OpKind::reduction: return "reduction";
        case OpKind::embedding: return "embedding";
        case OpKind::dropout: return "dropout";
        case OpKind::shape: return "shape";
        case OpKind::loss: return "loss";
        case OpKind::checkpoint: return "checkpoint";
    }
    return "unknown";
}

Backend& current() { return override_backend ? *override_backend : default_tape(); }

UseBackend::UseBackend(Backend& backend) : previous_(override_backend) { override_backend = &backend; }
UseBackend::~UseBackend() { override_backend = previous_; }

GradMode::GradMode(bool enabled) : backend_(current()), previous_(backend_.grad_enabled()) {
    backend_.set_grad_enabled(enabled);
}
GradMode::~GradMode() { backend_.set_grad_enabled(previous_); }

Tape& default_tape() {
    thread_local Tape tape;
    return tape;
}

}  // namespace remat::ad
