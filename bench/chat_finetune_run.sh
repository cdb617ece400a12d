#!/bin/bash
# docs/training.md's supervised fine-tuning run (a benchmark, never a test). The Moby-Dick GPT-2 of
# bench/lora_real_run.sh (6 layers, raw bytes, 256 positions; pretrained here with the same flags when
# absent) gets a chat template (Zephyr's turn markers) and is fine-tuned on questions and answers about
# the book (bench/moby_chat.py: chapter titles and openings; chapters 126-135 held out), the loss on
# the answers only — once in padded micro-batches, once packed into rows of 256 bytes. Prints what each
# run reports, draws both curves, and answers the same questions greedily before and after.
#
#   bench/chat_finetune_run.sh [BUILD_DIR] [WORK_DIR]        EPOCHS=8 by default
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/remat-chat-run}
epochs=${EPOCHS:-8}
remat=$(realpath "$build/remat")
bench=$(dirname "$(realpath "$0")")
mkdir -p "$work" && cd "$work"

source "$bench/moby_pretrained.sh"

# The pretrained model with a chat template: <|user|>, <|assistant|> and </s> as plain text.
rm -rf chat-base && cp -r pretrained chat-base
cat > chat-base/tokenizer_config.json <<'JSON'
{"chat_template": "{% for m in messages %}{{ '<|' + m['role'] + '|>\n' + m['content'] + '</s>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"}
JSON
python3 "$bench/moby_chat.py" chapters train.jsonl valid.jsonl

ask() {  # ask MODEL QUESTION: the greedy answer, up to its end of turn
  printf '[{"role": "user", "content": "%s"}]' "$2" > question.json
  "$remat" generate "$1" --chat question.json --max-new-tokens 120 --temperature 0 --stop '</s>' 2> /dev/null
  echo
}
questions=("What is chapter 42 of Moby-Dick called?" "How does chapter 1 of Moby-Dick begin?"
           "Which chapter of Moby-Dick is called \\\"The Chapel\\\"?" "What is chapter 133 of Moby-Dick called?")
for q in "${questions[@]}"; do echo "--- before: $q"; ask chat-base "$q"; done

common=(chat-base --data train.jsonl --valid valid.jsonl --format chat --epochs "$epochs" --batch 8 --seq 256
        --lr 1e-3 --warmup 20 --schedule cosine --min-lr 1e-4 --weight-decay 0.1 --seed 7 --validate-every 25 --log-every 50)
rm -rf padded packed padded.jsonl packed.jsonl
for run in padded packed; do
  flags=(); [ $run = packed ] && flags=(--pack)
  /usr/bin/time -v "$remat" train "${common[@]}" "${flags[@]}" --save $run --log $run.jsonl > $run.out 2> $run.time
  echo "=== $run"; grep -E '^(data|validation|training):' $run.out; tail -2 $run.out | head -1
  grep -E "Maximum resident" $run.time
done
"$remat" plot padded.jsonl packed.jsonl -o chat-finetune.png --title "Questions about Moby-Dick: padded and packed" > /dev/null
for q in "${questions[@]}"; do echo "--- after (packed): $q"; ask packed "$q"; done
