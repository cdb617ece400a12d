#pragma once
// The precision matrix products run in: fp32, or bf16 inputs with fp32 accumulation and fp32 output
// (mixed precision on the CPU's matrix units, through oneDNN). Parameters, gradients, optimiser state
// and every other op stay fp32 whatever the setting. See docs/precision.md.
//
//   {
//       remat::Autocast bf16(remat::Precision::bf16);   // this thread's products run in bf16 …
//       Var loss = model.loss(model(ids), labels);
//       tape.backward(loss);                             // … and their backward too
//   }                                                    // fp32 again
//
// The setting belongs to the calling thread, like gradient mode. An op reads it when it runs
// forward and keeps it for its backward, and a checkpointed block recomputes with the setting its
// forward saw, so backward may run outside the scope and every checkpointing policy still gives
// the gradients the plain model gives.
#include <memory>
#include <string_view>

namespace remat {

namespace ops::detail {
class Bf16Cache;
}

enum class Precision { fp32, bf16 };

// The calling thread's setting (fp32 unless an Autocast scope says otherwise).
Precision precision();

// "fp32" or "bf16"; throws ValueError naming the accepted values.
Precision parse_precision(std::string_view text);
std::string_view name(Precision p);

// Sets the calling thread's precision for its lifetime, then puts the previous one back. In bf16 it
// converts each weight to bf16 once and reuses that copy until the scope ends, as PyTorch's autocast
// does: parameters must not change inside the scope (open one per step, and step the optimiser
// outside it).
class Autocast {
public:
    explicit Autocast(Precision p);
    ~Autocast();
    Autocast(const Autocast&) = delete;
    Autocast& operator=(const Autocast&) = delete;

private:
    Precision previous_;
    std::unique_ptr<ops::detail::Bf16Cache> cache_;
    ops::detail::Bf16Cache* outer_cache_;
};

namespace detail {
// Sets the calling thread's precision and returns the previous one, keeping the Autocast scopes'
// copies (a checkpointed block's recomputation runs with the precision its forward saw).
Precision exchange_precision(Precision p);
}  // namespace detail

}  // namespace remat
