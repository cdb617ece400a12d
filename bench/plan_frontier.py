#!/usr/bin/env python3
"""The time-versus-memory frontier of checkpointing plans, from bench/plan's JSON, as an SVG.

    build/bench/plan deep --json deep.json && build/bench/plan small --json small.json
    python3 bench/plan_frontier.py deep.json small.json -o docs/checkpointing-frontier.svg

One panel per JSON file: measured peak activation memory (x) against step time relative to `none`
(y); the fixed policies as labelled grey points, the five plans as a blue line, each budget as a
dashed vertical line. Plain python3, no plotting library (the SVG is written by hand).
"""
import argparse
import json
import math

W, H = 460, 330  # one panel
LEFT, RIGHT, TOP, BOTTOM = 58, 16, 34, 44


def nice_step(raw):
    """1, 2 or 5 times a power of ten, at least raw."""
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def panel(data, x0):
    points = data["points"]
    none_ms = next(p["ms"] for p in points if p["name"] == "none")
    xs = [p["peak"] / 1e6 for p in points]
    ys = [p["ms"] / none_ms for p in points]
    step = nice_step(max(xs) * 1.08 / 5)
    xmax = step * math.ceil(max(xs) * 1.08 / step)
    ymin, ymax = min(0.95, min(ys) - 0.02), max(ys) + 0.05
    sx = lambda v: x0 + LEFT + (W - LEFT - RIGHT) * v / xmax
    sy = lambda v: TOP + (H - TOP - BOTTOM) * (ymax - v) / (ymax - ymin)
    out = [f'<text x="{x0 + W / 2}" y="20" text-anchor="middle" font-size="13" font-weight="bold">'
           f'GPT-2 {data["config"]}: time against memory</text>',
           f'<rect x="{sx(0)}" y="{sy(ymax)}" width="{sx(xmax) - sx(0)}" height="{sy(ymin) - sy(ymax)}" '
           'fill="none" stroke="#888"/>']
    for i in range(round(xmax / step) + 1):  # grid and ticks
        v = step * i
        out.append(f'<line x1="{sx(v)}" y1="{sy(ymin)}" x2="{sx(v)}" y2="{sy(ymax)}" stroke="#eee"/>')
        out.append(f'<text x="{sx(v)}" y="{sy(ymin) + 14}" text-anchor="middle" font-size="10">{v:.0f}</text>')
    for i in range(6):
        t = ymin + (ymax - ymin) * i / 5
        out.append(f'<line x1="{sx(0)}" y1="{sy(t)}" x2="{sx(xmax)}" y2="{sy(t)}" stroke="#eee"/>')
        out.append(f'<text x="{sx(0) - 5}" y="{sy(t) + 3}" text-anchor="end" font-size="10">{t:.2f}</text>')
    out.append(f'<text x="{x0 + W / 2}" y="{H - 8}" text-anchor="middle" font-size="11">'
               'measured peak activation memory (MB)</text>')
    out.append(f'<text transform="translate({x0 + 14},{H / 2}) rotate(-90)" text-anchor="middle" font-size="11">'
               'step time / none</text>')
    plans = [p for p in points if p["budget"]]
    for p in plans:
        out.append(f'<line x1="{sx(p["budget"] / 1e6)}" y1="{sy(ymin)}" x2="{sx(p["budget"] / 1e6)}" y2="{sy(ymax)}" '
                   'stroke="#3B6EA8" stroke-opacity="0.35" stroke-dasharray="3,3"/>')
    path = " ".join(f'{sx(p["peak"] / 1e6):.1f},{sy(p["ms"] / none_ms):.1f}' for p in sorted(plans, key=lambda p: p["peak"]))
    out.append(f'<polyline points="{path}" fill="none" stroke="#3B6EA8" stroke-width="2"/>')
    labels = []  # where labels went, so that close points' labels do not overlap
    for p in points:
        x, y = sx(p["peak"] / 1e6), sy(p["ms"] / none_ms)
        ly = y - 5
        while any(abs(lx - x) < 40 and abs(lyy - ly) < 11 for lx, lyy in labels):
            ly += 12
        if not p["budget"]:
            labels.append((x, ly))
        if p["budget"]:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="#3B6EA8"/>')
        else:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="#999"/>')
            out.append(f'<text x="{x + 6:.1f}" y="{ly:.1f}" font-size="10" fill="#555">{p["name"]}</text>')
    out.append(f'<text x="{sx(xmax) - 6}" y="{sy(ymax) + 16}" text-anchor="end" font-size="10" fill="#3B6EA8">'
               'plans for five budgets (dashed)</text>')
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    runs = [json.load(open(path)) for path in args.json]
    body = []
    for i, data in enumerate(runs):
        body += panel(data, i * W)
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W * len(runs)}" height="{H}" '
           f'font-family="DejaVu Sans, sans-serif"><rect width="100%" height="100%" fill="white"/>'
           + "".join(body) + "</svg>\n")
    open(args.output, "w").write(svg)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
