#!/usr/bin/env python3
"""remat vs PyTorch: greedy decoding at batch 1 (issue 19), side by side in one run, against the machine's
read bandwidth.

    ninja -C build && python3 bench/generate_compare.py [gpt2-small] [smollm] [--rounds 3] [--build build]

Runs build/bench/read_bandwidth once (both threads: the decode ceiling is bandwidth / weight bytes), then for
each model alternates build/bench/generate and bench/torch_generate.py (F.linear, as HF's modules, and --gemv,
PyTorch's faster one-row path) for --rounds rounds, each a median of --repeats runs. Prints per model: prefill
ms, decode tokens/s, remat's ratios to both PyTorch baselines, and decode speed as a fraction of
bandwidth / weight bytes (float32 weights as stored, the tied matrix once). Needs no torch itself.
"""
import argparse
import json
import os
import statistics
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_json(argv, env=None):
    out = subprocess.run(argv, cwd=ROOT, check=True, capture_output=True, text=True, env=env).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", choices=[[], "gpt2-small", "smollm"], default=[])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    models = args.models or ["gpt2-small", "smollm"]
    bandwidth = {r["threads"]: r["gb_per_s"] for r in run_json([os.path.join(args.build, "bench", "read_bandwidth")])}
    print(f"read bandwidth (2 GiB buffer): {bandwidth.get(1, 0):.1f} GB/s with 1 thread, {bandwidth.get(2, 0):.1f} with 2")
    limit_bw = max(bandwidth.values())
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    for model in models:
        runs = {"remat": [], "PyTorch F.linear": [], "PyTorch torch.mv": []}
        for _ in range(args.rounds):
            runs["remat"] += run_json([os.path.join(args.build, "bench", "generate"), model, "--repeats", str(args.repeats)])
            runs["PyTorch F.linear"] += run_json(["/usr/bin/python3", "bench/torch_generate.py", model, "--repeats", str(args.repeats)], env)
            runs["PyTorch torch.mv"] += run_json(["/usr/bin/python3", "bench/torch_generate.py", model, "--gemv", "--repeats", str(args.repeats)], env)
        weight_bytes = runs["remat"][0]["weight_bytes"]
        limit = limit_bw * 1e9 / weight_bytes
        print(f"\n== {model}: prompt 64, 128 new tokens, batch 1, 2 threads; weights {weight_bytes / 1e6:.0f} MB (float32); "
              f"limit {limit:.1f} tokens/s at {limit_bw:.1f} GB/s; medians of {args.rounds} rounds ==")
        print(f"{'':18} {'prefill ms':>10} {'decode tok/s':>12} {'of limit':>9}")
        rate = {}
        for name, rs in runs.items():
            prefill = statistics.median(r["prefill_ms"] for r in rs)
            rate[name] = statistics.median(r["decode_tokens_per_s"] for r in rs)
            print(f"{name:18} {prefill:10.1f} {rate[name]:12.2f} {rate[name] / limit:8.0%}")
        print(f"remat decode speed / PyTorch's: {rate['remat'] / rate['PyTorch F.linear']:.2f}x (F.linear), "
              f"{rate['remat'] / rate['PyTorch torch.mv']:.2f}x (torch.mv)")


if __name__ == "__main__":
    main()
