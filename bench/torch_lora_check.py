#!/usr/bin/python3
"""Checks bench/torch_llama.py's --lora mode before its timings are trusted; exits 1 if any check fails.

    /usr/bin/python3 bench/torch_lora_check.py            # a few seconds: tinylora, and smollm for (a)
    /usr/bin/python3 bench/torch_lora_check.py --no-smollm

(a) With B zero the adapted model computes the base model: the loss of build(config, lora=R) equals
    build(config)'s bitwise, in fp32 and under bf16 autocast, dropout live (smollm: tied head;
    tinylora: untied).
(b) In float64, d loss / d one entry of lora_A and of lora_B (the largest-gradient entry of each tensor
    checked, B random so that A's gradient is not zero) against a five-point central difference of
    the loss, the dropout masks replayed by reseeding; relative error at most 1e-6.
(c) Checkpointing: step none and step blocks (torch.utils.checkpoint per decoder layer, non-reentrant)
    give the same loss and the same adapter gradients (fp32 and bf16, dropout live), and no frozen
    parameter ever gets a gradient. For contrast it shows what the reentrant variant would do: the
    frozen embedding's output needs no grad, so the checkpointed layers' outputs need none either and
    the adapters inside them get no gradient (here, with every layer checkpointed, the loss needs none).
"""
import argparse
import os
import sys
import warnings

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # must precede `import torch`
import torch  # noqa: E402
import torch.utils.checkpoint  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt2 import loss_of  # noqa: E402
from torch_llama import build  # noqa: E402

R, DROPOUT, SEED = 4, 0.05, 11
FD_TENSORS = ["layers.0.self_attn.q_proj", "layers.0.self_attn.k_proj", "layers.1.mlp.down_proj",
              "layers.1.mlp.gate_proj"]
failures = []


def check(ok, message):
    print(("ok    " if ok else "FAIL  ") + message)
    if not ok:
        failures.append(message)


def loss_and_grads(model, ids, checkpoint, bf16=False):
    """One step as serve's: grads set to None, the same dropout masks for the same SEED."""
    model.zero_grad(set_to_none=True)
    torch.manual_seed(SEED)
    loss = loss_of(model, ids, checkpoint, bf16)
    loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters() if p.requires_grad}
    frozen_with_grad = [n for n, p in model.named_parameters() if not p.requires_grad and p.grad is not None]
    return loss.item(), grads, frozen_with_grad


def check_base_loss(config):
    for bf16 in (False, True):
        base, ids = build(config)
        adapted, _ = build(config, lora=R, lora_dropout=DROPOUT)
        torch.manual_seed(SEED)
        want = loss_of(base, ids, False, bf16).item()
        torch.manual_seed(SEED)
        got = loss_of(adapted, ids, False, bf16).item()
        check(got == want, f"(a) {config} {'bf16' if bf16 else 'fp32'}: loss with B zero {got!r}, "
                           f"base model {want!r}")


def check_finite_difference():
    model, ids = build("tinylora", lora=R, lora_dropout=DROPOUT, lora_random_b=True)
    model.double()
    _, grads, frozen_with_grad = loss_and_grads(model, ids, False)
    check(not frozen_with_grad, f"(b) no frozen parameter has a gradient {frozen_with_grad or ''}")
    params = dict(model.named_parameters())

    def loss():
        torch.manual_seed(SEED)
        with torch.no_grad():
            return model(ids).item()

    h = 1e-3
    for layer in FD_TENSORS:
        for matrix in ("lora_A", "lora_B"):
            name = f"{layer}.{matrix}.weight"
            p, g = params[name], grads[name]
            i = int(g.abs().argmax())
            x0 = p.data.view(-1)[i].item()
            f = {}
            for k in (-2, -1, 1, 2):
                p.data.view(-1)[i] = x0 + k * h
                f[k] = loss()
            p.data.view(-1)[i] = x0
            fd = (f[-2] - 8 * f[-1] + 8 * f[1] - f[2]) / (12 * h)
            analytic = g.view(-1)[i].item()
            rel = abs(analytic - fd) / max(abs(analytic), abs(fd))
            check(rel <= 1e-6, f"(b) {name}[{i // p.shape[1]}, {i % p.shape[1]}]: "
                               f"autograd {analytic:.12e}, finite difference {fd:.12e}, relative error {rel:.2e}")


def check_checkpointing():
    for bf16 in (False, True):
        tag = "bf16" if bf16 else "fp32"
        model, ids = build("tinylora", lora=R, lora_dropout=DROPOUT, lora_random_b=True)
        loss_none, g_none, frozen_none = loss_and_grads(model, ids, False, bf16)
        loss_blocks, g_blocks, frozen_blocks = loss_and_grads(model, ids, True, bf16)
        check(not frozen_none and not frozen_blocks, f"(c) {tag}: no frozen parameter has a gradient")
        missing = [n for n, g in g_blocks.items() if g is None]
        check(not missing and len(g_blocks) == 2 * 7 * 2,
              f"(c) {tag}: blocks gives all {len(g_blocks)} adapter matrices a gradient {missing or ''}")
        if missing:
            continue
        diff = max((g_none[n] - g_blocks[n]).abs().max().item() for n in g_none)
        scale = max(g.abs().max().item() for g in g_none.values())
        bitwise = all(torch.equal(g_none[n], g_blocks[n]) for n in g_none)
        check(loss_none == loss_blocks and diff <= 1e-6 * scale,
              f"(c) {tag}: loss none {loss_none!r}, blocks {loss_blocks!r}; adapter gradients "
              f"{'bitwise equal' if bitwise else f'max |difference| {diff:.3e} (largest gradient {scale:.3e})'}")

    # For contrast, not a check of torch_llama.py: the same forward with the reentrant variant.
    model, ids = build("tinylora", lora=R, lora_dropout=DROPOUT, lora_random_b=True)
    checkpoint = torch.utils.checkpoint.checkpoint
    torch.utils.checkpoint.checkpoint = lambda *a, use_reentrant, **k: checkpoint(*a, use_reentrant=True, **k)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "None of the inputs have requires_grad=True"
            loss = loss_of(model, ids, True, False)
    finally:
        torch.utils.checkpoint.checkpoint = checkpoint
    print(f"info  (c) with use_reentrant=True instead the loss would {'' if loss.requires_grad else 'not '}require "
          f"grad: no adapter inside a checkpointed layer gets a gradient (why torch_llama.py's is non-reentrant)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-smollm", action="store_true", help="check (a) on tinylora only")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "2")))
    for config in ["tinylora"] + ([] if args.no_smollm else ["smollm"]):
        check_base_loss(config)
    check_finite_difference()
    check_checkpointing()
    print(f"{len(failures)} failed" if failures else "all checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
