#!/bin/bash
# Data-parallel training on one machine (a benchmark, never a test), for docs/distributed.md: the
# benchmarks' GPT-2 small (L12 C768 T128, 2 windows a micro-batch) and deep (L24 C256 T256, 4 windows)
# trained for STEPS steps of 2 micro-batches each, as
#   1 rank x 2 threads:  remat train --accumulate 2
#   2 ranks x 1 thread:  mpirun -np 2 remat train --accumulate 1   (mpirun binds one core to each rank)
# Prints the median step time of each (the first step left out), the ranks' communication time per
# step (summing gradients and losses; the log's communication_seconds) and checks that both runs
# logged the same losses. Data: data/founding-texts.txt repeated, as raw bytes.
#
#   bench/distributed_run.sh [BUILD_DIR] [WORK_DIR]        STEPS=8 by default
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/remat-distributed-run}
steps=${STEPS:-8}
remat=$(realpath "$build/remat")
mkdir -p "$work"
text="$work/text.txt"
[ -s "$text" ] || { for i in $(seq 200); do cat data/founding-texts.txt; done > "$text"; }
export OMPI_MCA_pml=ob1
mpirun=(mpirun --allow-run-as-root -np 2)

for config in "small 12 768 12 50257 128 2" "deep 24 256 8 8192 256 4"; do
  read -r name layers width heads vocab seq batch <<< "$config"
  model="$work/$name"
  [ -f "$model/model.safetensors" ] || "$remat" init "$model" --arch gpt2 --n-layer "$layers" --n-embd "$width" \
    --n-head "$heads" --vocab-size "$vocab" --n-positions 1024 --seed 1 > /dev/null
  common=("$model" --data "$text" --steps "$steps" --batch "$batch" --seq "$seq" --lr 1e-4)
  rm -f "$work/$name-one.jsonl" "$work/$name-two.jsonl"
  "$remat" train "${common[@]}" --accumulate 2 --log "$work/$name-one.jsonl" > /dev/null 2>&1
  "${mpirun[@]}" "$remat" train "${common[@]}" --accumulate 1 --log "$work/$name-two.jsonl" > /dev/null 2>&1
  python3 - "$name" "$work/$name-one.jsonl" "$work/$name-two.jsonl" <<'PY'
import json, statistics, sys
name, one, two = sys.argv[1], [json.loads(l) for l in open(sys.argv[2])], [json.loads(l) for l in open(sys.argv[3])]
def step_ms(rows):
    return statistics.median(r["tokens"] / r["step"] / r["tokens_per_second"] * 1e3 for r in rows[1:])
comm = statistics.median(r["communication_seconds"] * 1e3 for r in two[1:])
same = [r["loss"] for r in one] == [r["loss"] for r in two]
print(f"{name}: 1 rank x 2 threads {step_ms(one):.0f} ms/step; 2 ranks x 1 thread {step_ms(two):.0f} ms/step, "
      f"of which communication {comm:.1f} ms ({100 * comm / step_ms(two):.1f} %); same losses: {same}")
PY
done
