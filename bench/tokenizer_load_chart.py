#!/usr/bin/env python3
"""How long loading a tokenizer.json takes, before and after a change, against plain JSON parsing, as an SVG.

    OLD/bench/tokenizer_load DIR 7 | tail -1 >> before.jsonl     # one line per tokenizer folder
    NEW/bench/tokenizer_load DIR 7 | tail -1 >> after.jsonl
    python3 bench/tokenizer_load_chart.py before.jsonl after.jsonl --names "Llama 3.2" "Qwen2.5" "Mistral" \\
        -o docs/tokenizer-load.svg

One group of bars per tokenizer (the lines of both files in the same order): remat's load before and
after, nlohmann-json building the document tree of the same file, and nlohmann-json's parser keeping
nothing (the floor of any JSON reading). Seconds, medians of bench/tokenizer_load's rounds. Plain
python3, no plotting library (the SVG is written by hand).
"""
import argparse
import json

BARS = [("before", "load_s", "#c44e52", "remat, before"),
        ("after", "load_s", "#4c72b0", "remat, after"),
        ("after", "dom_s", "#999999", "nlohmann::json::parse (document tree)"),
        ("after", "scan_s", "#cccccc", "nlohmann parser, nothing kept")]
LEFT, RIGHT, TOP, BAR, GAP, GROUP_GAP = 110, 70, 64, 14, 2, 16
WIDTH = 640


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--names", nargs="+", required=True, help="one label per line of the files")
    parser.add_argument("-o", "--out", required=True)
    args = parser.parse_args()
    rows = {"before": [json.loads(l) for l in open(args.before) if l.strip()],
            "after": [json.loads(l) for l in open(args.after) if l.strip()]}
    if not len(rows["before"]) == len(rows["after"]) == len(args.names):
        parser.error("the two files and --names must have the same number of lines")

    top = max(r[key] for which, key, _, _ in BARS for r in rows[which])
    scale = (WIDTH - LEFT - RIGHT) / top
    group = len(BARS) * (BAR + GAP) + GROUP_GAP
    height = TOP + group * len(args.names) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
           f'<text x="{LEFT}" y="18" font-size="14">Loading tokenizer.json (seconds, median of rounds)</text>']
    for i, (_, _, colour, label) in enumerate(BARS):  # legend, two per line
        x, y = LEFT + (i % 2) * 250, 34 + (i // 2) * 16
        out.append(f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill="{colour}"/>')
        out.append(f'<text x="{x + 18}" y="{y}">{label}</text>')
    for g, name in enumerate(args.names):
        y0 = TOP + g * group
        megabytes = rows["after"][g]["bytes"] / 1e6
        out.append(f'<text x="{LEFT - 8}" y="{y0 + 2 * (BAR + GAP)}" text-anchor="end">{name}</text>')
        out.append(f'<text x="{LEFT - 8}" y="{y0 + 2 * (BAR + GAP) + 14}" text-anchor="end" fill="#666">{megabytes:.1f} MB</text>')
        for b, (which, key, colour, _) in enumerate(BARS):
            seconds = rows[which][g][key]
            y = y0 + b * (BAR + GAP)
            out.append(f'<rect x="{LEFT}" y="{y}" width="{seconds * scale:.1f}" height="{BAR}" fill="{colour}"/>')
            out.append(f'<text x="{LEFT + seconds * scale + 4:.1f}" y="{y + BAR - 3}">{seconds:.3f}</text>')
    out.append(f'<line x1="{LEFT}" y1="{TOP - 4}" x2="{LEFT}" y2="{height - 26}" stroke="black"/>')
    out.append("</svg>")
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
