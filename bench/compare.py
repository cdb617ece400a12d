#!/usr/bin/env python3
"""remat vs PyTorch: a GPT-2 or Llama training step (forward + backward of the LM loss) side by side, in one run.

    ninja -C build && python3 bench/compare.py                 # tiny small deep smollm (~8 min)
    python3 bench/compare.py deep --rounds 9                    # one config, more rounds
    python3 bench/compare.py --json out.json --plot docs/benchmarks.png
    python3 bench/compare.py small deep --precision bf16           # remat Autocast vs torch.autocast

Spawns two step servers per config and drives them one step at a time, so rounds alternate
remat, PyTorch, remat, PyTorch … and drift or a noisy neighbour hits both alike:
  * build/bench/model_step <config> none blocks sqrt selective   (REMAT_NUM_THREADS unset: its pool of 2 threads)
  * /usr/bin/python3 bench/torch_gpt2.py <config>, bench/torch_llama.py smollm   (torch.set_num_threads(2),
    OMP_WAIT_POLICY=PASSIVE)
Each turn runs one untimed step, then the timed one (--settle): the first step after a switch pays
for the other process (OpenBLAS workers still spinning in sched_yield for a while after their last
sgemm, caches, vCPU wake-up) — on this VM an idle gap of 0.2 s between steps made the next step of
either side 2-3x slower, so steps run back to back, as in a training loop.

Prints, per config: min/median/max ms per step of each, the ratio of medians remat/PyTorch, model
FLOPs utilisation 6·N·tokens/time (N = parameters doing matmuls: all but the position embedding;
attention's QKᵀ and PV not counted) against the raw sgemm peak measured in the same run by
model_step (cblas_sgemm 1024³, best of 10, 2 threads; torch.mm's is printed alongside), and the
checkpoint table: time and peak activation memory of each policy relative to its own `none`.
With --precision bf16 both sides run mixed precision (remat: an Autocast scope, remat/ops/precision.hpp;
PyTorch: torch.autocast("cpu", dtype=torch.bfloat16) around the forward and loss), a third server runs
remat in fp32 (policy none) in the same rounds for remat's own speed-up, the peaks add a raw bf16
1024³ product on each side (remat: oneDNN in remat's bands on its pool; PyTorch: torch.mm in
bfloat16), and MFU is against remat's bf16 peak.
This orchestrator needs no torch; plain python3.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from step_server import ROOT, Server, environments

CONFIGS = {  # as bench/model_step.cpp and bench/torch_gpt2.py, bench/torch_llama.py
    "tiny": "L4 C128 H4 V1024 T64 B4",
    "small": "L12 C768 H12 V50257 T128 B2",
    "deep": "L24 C256 H8 V8192 T256 B4",
    "smollm": "L30 C576 H9 KV3 I1536 V49152 T256 B2",  # a Llama of SmolLM2-135M's shape
}
LLAMA_CONFIGS = {"smollm"}


def family(name):
    return "Llama" if name in LLAMA_CONFIGS else "GPT-2"
REMAT_POLICIES = ["none", "blocks", "sqrt", "selective"]
# --torch-malloc-tuned: glibc keeps freed memory instead of returning it to the kernel (no heap trim;
# blocks up to 32 MiB, the most glibc allows, from the heap instead of mmap), so PyTorch's steps stop
# page-faulting their buffers back in, as remat's block cache does for remat.
TUNED_MALLOC = "glibc.malloc.trim_threshold=1099511627776:glibc.malloc.mmap_threshold=33554432"
TORCH_POLICIES = ["none", "blocks"]  # blocks = torch.utils.checkpoint.checkpoint per block, non-reentrant


def run_config(name, args):
    remat_env, torch_env = environments()
    if args.torch_malloc_tuned:
        torch_env["GLIBC_TUNABLES"] = TUNED_MALLOC
    bf16 = args.precision == "bf16"
    model_step = os.path.join(args.build, "bench", "model_step")
    remat = Server([model_step, name, "--precision", args.precision] + REMAT_POLICIES, remat_env)
    remat_fp32 = Server([model_step, name, "--precision", "fp32", "none"], remat_env) if bf16 else None
    torch_server = "torch_llama.py" if name in LLAMA_CONFIGS else "torch_gpt2.py"
    torch = Server(["/usr/bin/python3", os.path.join(ROOT, "bench", torch_server), name, "--precision", args.precision],
                   torch_env)
    try:
        n_remat, n_matmul = remat.ask("params")
        n_torch, _ = torch.ask("params")
        if n_remat != n_torch:
            raise RuntimeError(f"parameter counts differ: remat {n_remat:.0f}, PyTorch {n_torch:.0f}")
        time.sleep(args.gap)
        sgemm = remat.ask("sgemm")[0]
        time.sleep(args.gap)
        mm = torch.ask("mm")[0]
        bf16_peak = remat.ask("bf16gemm")[0] if bf16 else None
        torch_bf16_mm = torch.ask("bf16mm")[0] if bf16 else None

        # The sequence of one round, remat and the others alternating; even rounds run it backwards so
        # neither side always goes first.
        others = [(torch, "torch", p) for p in TORCH_POLICIES] + ([(remat_fp32, "remat-fp32", "none")] if bf16 else [])
        sequence = []
        for i, turn in enumerate([(remat, "remat", p) for p in REMAT_POLICIES]):
            sequence += [turn] + ([others[i]] if i < len(others) else [])
        sequence += others[len(REMAT_POLICIES):]
        times = {(side, p): [] for _, side, p in sequence}
        peaks = {}
        for r in range(args.warmup + args.rounds):
            for server, side, policy in sequence if r % 2 == 0 else sequence[::-1]:
                time.sleep(args.gap)
                for _ in range(args.settle):  # untimed: the other process's threads calm down meanwhile
                    server.ask(f"step {policy}")
                reply = server.ask(f"step {policy}")
                if r >= args.warmup:
                    times[(side, policy)].append(reply[0])
                    if side == "remat":
                        peaks[(side, policy)] = max(peaks.get((side, policy), 0), reply[1])
            print(f"  {name}: round {r + 1}/{args.warmup + args.rounds}{' (warm-up)' if r < args.warmup else ''}",
                  file=sys.stderr, flush=True)
        saved = {}
        for policy in TORCH_POLICIES:  # untimed: hooks and the profiler slow the step
            saved[("torch", policy)], peaks[("torch", policy)] = torch.ask(f"mem {policy}")
    finally:
        remat.close()
        torch.close()
        if remat_fp32:
            remat_fp32.close()
    return {
        "config": name,
        "shape": CONFIGS[name],
        "params": n_remat,
        "matmul_params": n_matmul,
        "tokens": tokens(name),
        "precision": args.precision,
        "sgemm_gflops": sgemm,
        "torch_mm_gflops": mm,
        "bf16_gemm_gflops": bf16_peak,
        "torch_bf16_mm_gflops": torch_bf16_mm,
        "rounds": args.rounds,
        "times": {f"{s}:{p}": v for (s, p), v in times.items()},
        "peak_bytes": {f"{s}:{p}": v for (s, p), v in peaks.items()},
        "torch_saved_bytes": {p: saved[("torch", p)] for p in TORCH_POLICIES},
    }


def tokens(name):
    fields = dict((f.rstrip("0123456789"), int(f.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))) for f in CONFIGS[name].split())
    return fields["B"] * fields["T"]


def report(res):
    med = {k: statistics.median(v) for k, v in res["times"].items()}
    print(f"\n== {family(res['config'])} {res['config']} ({res['shape']}), {res['params'] / 1e6:.2f} M parameters, "
          f"{res['tokens']} tokens/step, median of {res['rounds']} alternating rounds ==")
    bf16 = res.get("precision") == "bf16"
    print(f"peak: raw cblas_sgemm 1024³ (model_step, 2 threads) {res['sgemm_gflops']:.1f} GFLOP/s; "
          f"torch.mm 1024³ {res['torch_mm_gflops']:.1f} GFLOP/s")
    if bf16:
        print(f"precision bf16 (remat Autocast; PyTorch torch.autocast): raw bf16 1024³ product (remat's bands, "
              f"oneDNN) {res['bf16_gemm_gflops']:.1f} GFLOP/s; torch.mm bf16 {res['torch_bf16_mm_gflops']:.1f} GFLOP/s")
    peak = res["bf16_gemm_gflops"] if bf16 else res["sgemm_gflops"]
    flops = 6 * res["matmul_params"] * res["tokens"]
    print(f"{'fwd+bwd':<16} {'min ms':>9} {'median ms':>10} {'max ms':>9} {'GFLOP/s':>8} {'MFU':>6}")
    labels = {"remat": "remat bf16" if bf16 else "remat", "torch": "PyTorch 1.13" + (" bf16" if bf16 else ""),
              "remat-fp32": "remat fp32"}
    for side in ("remat", "torch") + (("remat-fp32",) if bf16 else ()):
        t = res["times"][f"{side}:none"]
        gflops = flops / (med[f"{side}:none"] * 1e6)
        print(f"{labels[side]:<16} {min(t):9.1f} {med[f'{side}:none']:10.1f} {max(t):9.1f} {gflops:8.1f} "
              f"{100 * gflops / peak:5.0f}%")
    print(f"ratio of medians remat/PyTorch: {med['remat:none'] / med['torch:none']:.2f}x")
    if bf16:
        print(f"remat bf16 speed-up over remat fp32: {med['remat-fp32:none'] / med['remat:none']:.2f}x "
              f"(MFU against the bf16 peak above)")
    print(f"\n{'checkpointing':<24} {'median ms':>10} {'time x':>7} {'peak act. MB':>13} {'memory x':>9}"
          f" {'saved MB':>9}")
    for key in [f"remat:{p}" for p in REMAT_POLICIES] + [f"torch:{p}" for p in TORCH_POLICIES]:
        side, policy = key.split(":")
        none = f"{side}:none"
        name = f"remat {policy}" if side == "remat" else f"PyTorch {'per-block ckpt' if policy == 'blocks' else 'none'}"
        peak = res["peak_bytes"][key]
        saved = f"{res['torch_saved_bytes'][policy] / 1e6:9.1f}" if side == "torch" else f"{'':>9}"
        print(f"{name:<24} {med[key]:10.1f} {med[key] / med[none]:7.2f} {peak / 1e6:13.1f} "
              f"{peak / res['peak_bytes'][none]:9.2f} {saved}")
    print("peak act. = peak live bytes during the step above the level before it (remat: memory tracker; "
          "PyTorch: profiler, op granularity); saved = PyTorch's tensors saved for backward + checkpoint inputs")


GNUPLOT = r"""
set terminal pngcairo size 960,{height} font "DejaVu Sans,9"
set output "{output}"
set datafile separator "\t"
set style fill solid 0.85 border -1
set boxwidth 0.7
set yrange [0:*]
set xrange [-0.6:5.6]
set grid ytics
set key off
set xtics rotate by -30 left
set multiplot layout {rows},2 title "GPT-2 and Llama training steps, remat (blue) vs PyTorch 1.13 (orange), 2 cores, medians"
{panels}
unset multiplot
"""
PANEL = r"""
set title "{config}: ms per step"
set ylabel "ms"
plot "{data}" index {index} using 0:2:4:xtic(1) with boxes lc rgb variable
set title "{config}: peak activation memory"
set ylabel "MB"
plot "{data}" index {index} using 0:3:4:xtic(1) with boxes lc rgb variable
"""


def plot(results, output):
    data = output + ".dat"
    with open(data, "w") as f:
        for res in results:
            for key in [f"remat:{p}" for p in REMAT_POLICIES] + [f"torch:{p}" for p in TORCH_POLICIES]:
                side, policy = key.split(":")
                label = f"remat {policy}" if side == "remat" else f"torch {'ckpt' if policy == 'blocks' else 'none'}"
                colour = 0x3B6EA8 if side == "remat" else 0xE07B39
                f.write(f"{label}\t{statistics.median(res['times'][key]):.2f}\t{res['peak_bytes'][key] / 1e6:.2f}"
                        f"\t{colour}\n")
            f.write("\n\n")
    panels = "".join(PANEL.format(config=r["config"], data=data, index=i) for i, r in enumerate(results))
    script = GNUPLOT.format(output=output, rows=len(results), height=260 * len(results), panels=panels)
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.remove(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("configs", nargs="*", choices=[[]] + list(CONFIGS), default=[])
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds (default 5)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up rounds (default 2)")
    parser.add_argument("--settle", type=int, default=1,
                        help="untimed steps at the start of each turn, before the timed one (default 1)")
    parser.add_argument("--gap", type=float, default=0.0, help="idle seconds before each turn (default 0)")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build directory")
    parser.add_argument("--torch-malloc-tuned", action="store_true",
                        help=f"run PyTorch with GLIBC_TUNABLES={TUNED_MALLOC}")
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                        help="fp32 (default), or bf16 mixed precision on both sides")
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--plot", help="also draw ms/step and activation memory per policy to this PNG (gnuplot)")
    args = parser.parse_args()
    configs = args.configs or list(CONFIGS)

    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"machine: {model}, {os.cpu_count()} CPUs; load average {load} at start")
    print("threads: remat's kernel pool, 2 threads (REMAT_NUM_THREADS unset; OpenBLAS single-threaded inside it); "
          "PyTorch torch.set_num_threads(2), OMP_WAIT_POLICY=PASSIVE")
    if args.torch_malloc_tuned:
        print(f"PyTorch's malloc: GLIBC_TUNABLES={TUNED_MALLOC}")
    results = []
    for name in configs:
        results.append(run_config(name, args))
        report(results[-1])
    with open("/proc/loadavg") as f:
        print(f"\nload average {f.read().split()[0]} at end")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
