#!/usr/bin/env python3
"""LoRA fine-tuning steps side by side: remat against PyTorch, and remat's LoRA step against its full
fine-tuning step, on a TinyLlama-1.1B-shaped model (docs/lora.md, "Speed and memory").

    ninja -C build bench/lora_step && python3 bench/lora_compare.py            # tinyllama, r 16 (~25 min)
    python3 bench/lora_compare.py --config tinylora --rounds 2                 # a small try (seconds)
    python3 bench/lora_compare.py --json lora.json

Three phases, each with its own servers (a 1.1B model's float32 weights are 4.4 GB a copy):
  fp32:  build/bench/lora_step CONFIG --lora R   against   bench/torch_llama.py CONFIG --lora R --lora-random-b
  bf16:  the same with --precision bf16 --base-precision bf16 (remat: the frozen base held in bf16; its
         products are bitwise --precision bf16's) against torch.autocast("cpu", bfloat16)
  full:  build/bench/lora_step CONFIG --full   against   build/bench/lora_step CONFIG --lora R   (fp32)
  full-none: the same without checkpointing (--checkpoint none; not in the default phases: ~20 GB)
Both sides checkpoint every decoder layer (remat --checkpoint blocks; PyTorch torch.utils.checkpoint per
layer, non-reentrant; --remat-checkpoint auto lets remat's planner choose within the machine's memory, as
`remat train --checkpoint auto` does; --remat-checkpoint none --torch-checkpoint none: neither), batch 1 of 512 tokens, LoRA on q, k, v, o, gate, up and down with dropout 0.05 and
B drawn N(0, 0.01²), so A gets a gradient. Steps alternate between the two servers, one untimed step
before each timed one (the other process's threads calm down meanwhile); the medians are compared.
Peak RSS is each server's own, after its steps. This orchestrator needs no torch; plain python3.
"""
import argparse
import json
import os
import statistics
import time

from step_server import ROOT, Server, environments

TOKENS = {"tinyllama": 512, "tinylora": 32}  # B · T of each config (bench/lora_step.cpp)


def duel(a, b, step_a, step_b, rounds, settle):
    """Alternating timed steps of two servers (even rounds a first, odd rounds b first): ms lists."""
    times = {"a": [], "b": []}
    pair = [("a", a, step_a), ("b", b, step_b)]
    for r in range(rounds):
        for side, server, command in pair if r % 2 == 0 else pair[::-1]:
            for _ in range(settle):
                server.ask(command)
            times[side].append(server.ask(command)[0])
    return times["a"], times["b"]


def summary(ms, tokens):
    med = statistics.median(ms)
    return {"ms": ms, "median_ms": med, "tokens_per_second": tokens / (med / 1e3)}


def phase_torch(args, precision):
    remat_env, torch_env = environments()
    lora_step = os.path.join(args.build, "bench", "lora_step")
    remat_argv = [lora_step, args.config, "--lora", str(args.rank), "--checkpoint", args.remat_checkpoint]
    torch_argv = ["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_llama.py"), args.config, "--lora", str(args.rank),
                  "--lora-random-b"]
    if precision == "bf16":
        remat_argv += ["--precision", "bf16", "--base-precision", "bf16"]
        torch_argv += ["--precision", "bf16"]
    remat = Server(remat_argv, remat_env)
    torch = Server(torch_argv, torch_env)
    try:
        for what in ("params", "trainable"):
            mine, theirs = remat.ask(what), torch.ask(what)
            if mine != theirs:
                raise RuntimeError(f"{what} differ: remat {mine}, PyTorch {theirs}")
        ms_remat, ms_torch = duel(remat, torch, "step", f"step {args.torch_checkpoint}", args.rounds, args.settle)
        return {
            "trainable": int(remat.ask("trainable")[0]),
            "parameters": int(remat.ask("params")[0]),
            "remat": dict(summary(ms_remat, TOKENS[args.config]), peak_rss=int(remat.ask("rss")[0])),
            "torch": dict(summary(ms_torch, TOKENS[args.config]), peak_rss=int(torch.ask("rss")[0])),
        }
    finally:
        remat.close()
        torch.close()


def phase_full(args, policy):
    remat_env, _ = environments()
    lora_step = os.path.join(args.build, "bench", "lora_step")
    full = Server([lora_step, args.config, "--full", "--checkpoint", policy], remat_env)
    lora = Server([lora_step, args.config, "--lora", str(args.rank), "--checkpoint", policy], remat_env)
    try:
        ms_lora, ms_full = duel(lora, full, "step", "step", args.rounds, args.settle)
        return {
            "lora": dict(summary(ms_lora, TOKENS[args.config]), peak_rss=int(lora.ask("rss")[0])),
            "full": dict(summary(ms_full, TOKENS[args.config]), peak_rss=int(full.ask("rss")[0])),
        }
    finally:
        full.close()
        lora.close()


def gib(n):
    return f"{n / 2**30:.2f} GiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="tinyllama", choices=sorted(TOKENS))
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=int, default=1, help="untimed steps before each timed one")
    parser.add_argument("--phases", nargs="+", default=["fp32", "bf16", "full"], choices=["fp32", "bf16", "full", "full-none"])
    parser.add_argument("--remat-checkpoint", default="blocks",
                        help="remat's policy in the fp32 and bf16 phases: none, blocks, auto, …")
    parser.add_argument("--torch-checkpoint", default="blocks", choices=["blocks", "none"],
                        help="PyTorch's in the fp32 and bf16 phases: every layer checkpointed, or nothing")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--json", help="write the measurements here")
    args = parser.parse_args()

    results = {"config": args.config, "rank": args.rank, "rounds": args.rounds, "remat_checkpoint": args.remat_checkpoint,
               "torch_checkpoint": args.torch_checkpoint}
    for phase in args.phases:
        t0 = time.time()
        if phase.startswith("full"):
            policy = "none" if phase == "full-none" else "blocks"
            r = results[phase] = phase_full(args, policy)
            print(f"full fine-tuning vs LoRA r {args.rank} (remat, fp32, {policy}): LoRA {r['lora']['median_ms']:.0f} ms, "
                  f"full {r['full']['median_ms']:.0f} ms: LoRA/full {r['lora']['median_ms'] / r['full']['median_ms']:.2f}; "
                  f"peak RSS LoRA {gib(r['lora']['peak_rss'])}, full {gib(r['full']['peak_rss'])}  ({time.time() - t0:.0f} s)",
                  flush=True)
        else:
            r = results[phase] = phase_torch(args, phase)
            m, t = r["remat"], r["torch"]
            print(f"{phase} (remat {args.remat_checkpoint}, PyTorch {args.torch_checkpoint}): {r['trainable']} of {r['parameters']} parameters trained; remat {m['median_ms']:.0f} ms "
                  f"({m['tokens_per_second']:.0f} tokens/s), PyTorch {t['median_ms']:.0f} ms ({t['tokens_per_second']:.0f} "
                  f"tokens/s): remat/PyTorch {m['median_ms'] / t['median_ms']:.2f}; peak RSS remat {gib(m['peak_rss'])}, "
                  f"PyTorch {gib(t['peak_rss'])}  ({time.time() - t0:.0f} s)", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
