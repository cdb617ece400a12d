#!/bin/bash
# Data-parallel training on one machine (a benchmark, never a test), for docs/distributed.md: the
# benchmarks' GPT-2 small (L12 C768 T128, 2 windows a micro-batch) and deep (L24 C256 T256, 4 windows)
# trained for STEPS steps of 2 micro-batches each, as
#   1 rank x 2 threads:  remat train --accumulate 2
#   2 ranks x 1 thread:  mpirun -np 2 remat train --accumulate 1   (mpirun binds one core to each rank;
#                        gradients summed in buckets during backward)
#   2 ranks, --gradient-sum after-backward: the same, the sum after backward, timed on its own
# Prints the median step time of each (the first step left out) and the communication time of the
# sum after backward (the log's communication_seconds: gradients and losses); the step without the
# sum is the after-backward step less that time, and the share of communication hidden behind
# backward is (step without sum + communication - step with the overlapped sum) / communication.
# Checks that the three runs logged the same losses. Data: data/founding-texts.txt repeated, as raw bytes.
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
  rm -f "$work/$name-one.jsonl" "$work/$name-during.jsonl" "$work/$name-after.jsonl"
  "$remat" train "${common[@]}" --accumulate 2 --log "$work/$name-one.jsonl" > /dev/null 2>&1
  "${mpirun[@]}" "$remat" train "${common[@]}" --accumulate 1 --log "$work/$name-during.jsonl" > /dev/null 2>&1
  "${mpirun[@]}" "$remat" train "${common[@]}" --accumulate 1 --gradient-sum after-backward \
    --log "$work/$name-after.jsonl" > /dev/null 2>&1
  python3 - "$name" "$work/$name-one.jsonl" "$work/$name-during.jsonl" "$work/$name-after.jsonl" <<'PY'
import json, statistics, sys
name = sys.argv[1]
one, during, after = ([json.loads(l) for l in open(path)] for path in sys.argv[2:5])
def step_ms(rows):
    return statistics.median(r["tokens"] / r["step"] / r["tokens_per_second"] * 1e3 for r in rows[1:])
def comm_ms(rows):
    return statistics.median(r["communication_seconds"] * 1e3 for r in rows[1:])
with_sum, comm = step_ms(during), comm_ms(after)
without = step_ms(after) - comm  # the same step with its (separately timed) sum left out
hidden = (without + comm - with_sum) / comm
same = [r["loss"] for r in one] == [r["loss"] for r in during] == [r["loss"] for r in after]
print(f"{name}: 1 rank x 2 threads {step_ms(one):.0f} ms/step; 2 ranks x 1 thread {with_sum:.0f} ms/step "
      f"(waiting {comm_ms(during):.1f} ms after backward); summed after backward {step_ms(after):.0f} ms/step, "
      f"of which communication {comm:.1f} ms; without the sum {without:.0f} ms; hidden {100 * hidden:.0f} %; "
      f"same losses: {same}")
PY
done
