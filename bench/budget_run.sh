#!/bin/bash
# `--checkpoint auto` under a memory limit (a benchmark, never a test; root, cgroup v1 or v2): the seed
# configuration of bench/train_run.sh — GPT-2 n_embd 1024, n_head 16, n_layer 24, n_positions 1024,
# vocab 50000, batch 3, T 1024, --accumulate 2 — trained for a few steps
#   1. inside a memory cgroup limited to 11 GiB (memory + swap), with --checkpoint none (expected to be
#      killed by the kernel's OOM killer) and with --checkpoint auto;
#   2. without a limit, with --checkpoint auto and --checkpoint blocks.
# Prints each run's plan, step time (median of the steps after the first), activation peak and
# whole-process peak RSS (/usr/bin/time).
#
#   bench/budget_run.sh [BUILD_DIR] [WORK_DIR]        STEPS=3, LIMIT=11G by default
set -euo pipefail
build=$(realpath "${1:-build}")
work=${2:-/tmp/remat-train-bench}
steps=${STEPS:-3}
limit=${LIMIT:-11G}
remat=$build/remat
source_root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"
text="$work/text.txt"
[ -s "$text" ] || { for i in $(seq 600); do cat "$source_root/data/founding-texts.txt"; done > "$text"; }
[ -f "$work/seed/model.safetensors" ] || "$remat" init "$work/seed" --arch gpt2 --n-layer 24 --n-embd 1024 --n-head 16 \
  --vocab-size 50000 --n-positions 1024 > /dev/null

# The cgroup: v1's memory hierarchy (memory and memory+swap limits) or v2's memory.max.
if [ -d /sys/fs/cgroup/memory ]; then
  group=/sys/fs/cgroup/memory/remat-budget-$$
  mkdir "$group"
  numfmt --from=iec "$limit" > "$group/memory.limit_in_bytes"
  [ -f "$group/memory.memsw.limit_in_bytes" ] && numfmt --from=iec "$limit" > "$group/memory.memsw.limit_in_bytes"
else
  group=/sys/fs/cgroup/remat-budget-$$
  mkdir "$group"
  numfmt --from=iec "$limit" > "$group/memory.max"
  echo 0 > "$group/memory.swap.max"
fi
trap 'rmdir "$group" 2>/dev/null || true' EXIT
echo "cgroup $group: limit $limit"

summary() {  # name log time-file
  python3 - "$@" <<'PY'
import json, re, statistics, sys
name, log, timing = sys.argv[1:4]
rows = [json.loads(l) for l in open(log)]
later = rows[1:] or rows
tokens = rows[0]["tokens"]
sec = statistics.median(tokens / r["tokens_per_second"] for r in later)
peak = max(r["peak_activation_bytes"] for r in later)
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(timing).read()).group(1)) * 1024
print(f"{name:34s} step {sec:8.2f} s   activation peak {peak / 2**30:6.2f} GiB   peak RSS {rss / 2**30:6.2f} GiB")
PY
}

train() {  # name (also the files' names) cgroup-or-empty policy
  local name=$1 cg=$2 policy=$3 status=0
  rm -f "$work/$name.jsonl"
  (
    [ -n "$cg" ] && echo $BASHPID > "$cg/cgroup.procs"
    exec /usr/bin/time -v "$remat" train "$work/seed" --data "$text" --steps "$steps" --batch 3 --seq 1024 --accumulate 2 \
      --checkpoint "$policy" --log "$work/$name.jsonl" --log-every 1
  ) > "$work/$name.out" 2> "$work/$name.time" || status=$?
  grep -h "^checkpointing" "$work/$name.out" || true
  if [ "$status" -ne 0 ]; then
    echo "$name: exit status $status ($(grep -h -m1 -E 'error:|Command terminated by signal' "$work/$name.time" || echo 'killed'))"
  else
    summary "$name" "$work/$name.jsonl" "$work/$name.time"
  fi
}

train "limit-$limit-none" "$group" none
train "limit-$limit-auto" "$group" auto
train "no-limit-auto" "" auto
train "no-limit-blocks" "" blocks
