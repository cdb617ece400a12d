#!/bin/bash
# Sourced by the benchmarks that start from a small pretrained model (bench/lora_real_run.sh,
# bench/chat_finetune_run.sh): a 6-layer GPT-2 (raw bytes: vocab 256, n_embd 256, 8 heads, 256
# positions) pretrained ${PRETRAIN:-400} steps on Moby-Dick (bench/moby_dick.sh), saved in ./pretrained
# unless it is there, with moby.tok / moby.tok.valid (the last 6 chapters held out). Needs $remat.
source "$(dirname "${BASH_SOURCE[0]}")/moby_dick.sh"
[ -f base/model.safetensors ] || "$remat" init base --arch gpt2 --n-layer 6 --n-embd 256 --n-head 8 --vocab-size 256 \
  --n-positions 256 --seed 1
[ -f moby.tok ] || "$remat" encode base chapters -o moby.tok --valid-docs 6 2> /dev/null
if [ ! -f pretrained/model.safetensors ]; then
  "$remat" train base --data moby.tok --valid moby.tok.valid --valid-windows 64 --steps "${PRETRAIN:-400}" --batch 8 --seq 256 \
    --lr 2e-3 --warmup 40 --schedule cosine --min-lr 2e-4 --weight-decay 0.1 --seed 7 --log-every 100 \
    --save pretrained --log pretrain.jsonl > pretrain.out 2> /dev/null
  tail -1 pretrain.out
fi
