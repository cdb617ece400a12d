#!/bin/bash
# Whole `remat train` runs of a TinyLlama-1.1B-shaped model (remat init: 22 layers, hidden 2048, 32
# heads with 4 KV heads, intermediate 5632, vocabulary 32000, untied head), batch 1 of 512 tokens,
# --checkpoint auto, for docs/lora.md ("Speed and memory"): LoRA r 16 on every projection with the base
# held in bf16, the same with a float32 base, and full fine-tuning; peak RSS (/usr/bin/time -v), the
# plan, and the last step's tokens/s. A benchmark, never a test: ~8 minutes and 18 GB for the last run.
#
#   bench/lora_memory_run.sh [BUILD_DIR] [WORK_DIR]          STEPS=3 by default
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/remat-lora-memory}
steps=${STEPS:-3}
remat=$(realpath "$build/remat")
bench=$(dirname "$(realpath "$0")")
mkdir -p "$work" && cd "$work"

source "$bench/moby_dick.sh"
[ -f tinyllama/model.safetensors ] || "$remat" init tinyllama --arch llama --n-layer 22 --n-embd 2048 --n-head 32 \
  --vocab-size 32000 --num-key-value-heads 4 --intermediate-size 5632 --tie-word-embeddings false --seed 1 > /dev/null
[ -f moby.tok ] || "$remat" encode tinyllama chapters -o moby.tok > /dev/null 2>&1  # raw bytes: ids < 256

lora=r=16,alpha=32,dropout=0.05,targets=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj
declare -A runs=(
  [lora-bf16]="--lora $lora --base-precision bf16 --precision bf16"
  [lora-fp32]="--lora $lora"
  [full-fp32]=""
)
for run in lora-bf16 lora-fp32 full-fp32; do
  # shellcheck disable=SC2086
  /usr/bin/time -v "$remat" train tinyllama --data moby.tok --steps "$steps" --batch 1 --seq 512 --lr 1e-4 --seed 7 \
    --checkpoint auto --log-every 1 ${runs[$run]} > "$run.out" 2> "$run.time"
  rss=$(awk '/Maximum resident/ {printf "%.2f GiB", $NF / 1048576}' "$run.time")
  echo "$run: peak RSS $rss; $(grep -m1 -E '^model:' "$run.out"); $(grep '^step ' "$run.out" | tail -1)"
done
