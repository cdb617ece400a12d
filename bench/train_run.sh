#!/bin/bash
# The training run's figures for docs/training.md (a benchmark, never a test):
#   1. the seed configuration — GPT-2 with n_embd 1024, n_head 16, n_layer 24, n_positions 1024,
#      vocab 50000 (354M parameters) — for a few steps of `remat train` at batch 3, T 1024,
#      --accumulate 2, under --checkpoint blocks and none: step time, whole-process peak RSS
#      (/usr/bin/time: weights, gradients, the accumulation sum, AdamW's moments, activations) and
#      the activation peak the run logs;
#   2. the loop's own overhead (data, logging) on the benchmarks' small configuration, L12 C768 T128 B2.
# Data: data/founding-texts.txt repeated, as raw bytes (ids < 256 are in any vocabulary).
#
#   bench/train_run.sh [BUILD_DIR] [WORK_DIR]        STEPS=3 by default
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/remat-train-bench}
steps=${STEPS:-3}
remat=$build/remat
mkdir -p "$work"
text="$work/text.txt"
[ -s "$text" ] || { for i in $(seq 600); do cat data/founding-texts.txt; done > "$text"; }

summary() {  # name log time-file: median step seconds (steps after the first), activation peak, RSS
  python3 - "$@" <<'PY'
import json, re, statistics, sys
name, log, timing = sys.argv[1:4]
rows = [json.loads(l) for l in open(log)]
later = rows[1:] or rows
tokens = rows[0]["tokens"]
sec = statistics.median(tokens / r["tokens_per_second"] for r in later)
peak = max(r["peak_activation_bytes"] for r in later)
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(timing).read()).group(1)) * 1024
print(f"{name:28s} step {sec:8.2f} s   activation peak {peak / 2**30:6.2f} GiB   peak RSS {rss / 2**30:6.2f} GiB")
PY
}

[ -f "$work/seed/model.safetensors" ] || "$remat" init "$work/seed" --arch gpt2 --n-layer 24 --n-embd 1024 --n-head 16 \
  --vocab-size 50000 --n-positions 1024 > /dev/null
for policy in blocks none; do
  /usr/bin/time -v "$remat" train "$work/seed" --data "$text" --steps "$steps" --batch 3 --seq 1024 --accumulate 2 \
    --checkpoint "$policy" --log "$work/seed-$policy.jsonl" --log-every 1 > "$work/seed-$policy.out" 2> "$work/seed-$policy.time" \
    || { echo "seed $policy: failed (see $work/seed-$policy.time)"; continue; }
  summary "seed L24 C1024 B3x2 T1024 $policy" "$work/seed-$policy.jsonl" "$work/seed-$policy.time"
done

[ -f "$work/small/model.safetensors" ] || "$remat" init "$work/small" --arch gpt2 --n-layer 12 --n-embd 768 --n-head 12 \
  --vocab-size 50257 --n-positions 1024 > /dev/null
"$remat" train "$work/small" --data "$text" --steps 30 --batch 2 --seq 128 --log "$work/small.jsonl" > "$work/small.out" 2>/dev/null
echo "small L12 C768 T128 B2, 30 steps: $(grep -o 'loop overhead [0-9.]* %' "$work/small.out")"
