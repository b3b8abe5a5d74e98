"""The scaling table's plot (docs/bench_scaling.svg), from bench/run.py's BENCH_JSON file.

    BENCH_JSON=scaling.json bench/run.sh build 3 scaling
    /usr/bin/python3 bench/plot_scaling.py scaling.json docs/bench_scaling.svg

Four panels, log-log: step time and peak-memory growth against the vocabulary
and against the length; attn@2 solid, the faster torch dashed; one colour per model.
Plain SVG text: no plotting library needed.
"""
import json
import math
import os
import sys

W, H = 360, 250  # one panel
LEFT, RIGHT, TOP, BOTTOM = 58, 12, 28, 42
COLOURS = {"transformer": "#1f77b4", "bahdanau": "#d62728"}
TORCH = ("torch@2", "t@1+ob2")


def series(rows, model, sweep, metric):
    """[(x, attn value, torch value)] for one model and sweep; metric 'ms' or 'MB'."""
    out = []
    for r in rows:
        if r["model"] != model or r["sweep"] != sweep:
            continue
        res = r["results"]
        x = r["vocab"] if sweep == "vocabulary" else r["length"]
        if metric == "ms":
            a, t = res["attn@2"][0] / 1e3, min(res[w][0] for w in TORCH) / 1e3
        else:
            a, t = (res["attn@2"][1] - res["attn@2"][2]) / 1024, min(res[w][1] - res[w][2] for w in TORCH) / 1024
        out.append((x, max(a, 1e-3), max(t, 1e-3)))
    return out


def ticks(lo, hi):
    """Powers of ten, and 2 and 5 times them, between lo and hi."""
    out, e = [], math.floor(math.log10(lo))
    while 10 ** e <= hi:
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo <= v <= hi:
                out.append(v)
        e += 1
    return out


def panel(rows, sweep, metric, ox, oy):
    data = {m: series(rows, m, sweep, metric) for m in COLOURS}
    xs = [p[0] for s in data.values() for p in s]
    ys = [v for s in data.values() for p in s for v in p[1:]]
    x0, x1 = math.log10(min(xs)), math.log10(max(xs))
    y0, y1 = math.log10(min(ys) / 1.3), math.log10(max(ys) * 1.3)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    sx = lambda x: ox + LEFT + (math.log10(x) - x0) / (x1 - x0) * pw
    sy = lambda y: oy + TOP + ph - (math.log10(y) - y0) / (y1 - y0) * ph
    unit = "step time, ms" if metric == "ms" else "peak memory growth, MB"
    out = ['<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>' % (ox + LEFT, oy + TOP, pw, ph),
           '<text x="%d" y="%d" font-size="13" text-anchor="middle">%s against the %s</text>'
           % (ox + LEFT + pw / 2, oy + 18, unit, sweep)]
    for x in sorted(set(xs)):
        out.append('<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%d</text>' % (sx(x), oy + TOP + ph + 15, x))
    out.append('<text x="%d" y="%d" font-size="11" text-anchor="middle">%s (log)</text>'
               % (ox + LEFT + pw / 2, oy + TOP + ph + 32, "vocabulary V, length 20" if sweep == "vocabulary"
                  else "sentence length T, vocabulary 8000"))
    for y in ticks(10 ** y0, 10 ** y1):
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (ox + LEFT, ox + LEFT + pw, sy(y), sy(y)))
        out.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end">%g</text>' % (ox + LEFT - 4, sy(y) + 4, y))
    for model, pts in data.items():
        for k, dash in ((1, ""), (2, ' stroke-dasharray="5,3"')):
            path = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", sx(p[0]), sy(p[k])) for i, p in enumerate(pts))
            out.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>' % (path, COLOURS[model], dash))
            out += ['<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (sx(p[0]), sy(p[k]), COLOURS[model]) for p in pts]
    return out


def main():
    src, dst = sys.argv[1], sys.argv[2]
    doc = json.load(open(src))
    rows = doc["rows"]
    parts = []
    for i, metric in enumerate(("ms", "MB")):
        for j, sweep in enumerate(("vocabulary", "length")):
            parts += panel(rows, sweep, metric, j * W, 30 + i * H)
    legend = []
    for k, (model, colour) in enumerate(COLOURS.items()):
        for m, (who, dash) in enumerate((("attn@2", ""), ("torch (faster of @2, @1+ob2)", ' stroke-dasharray="5,3"'))):
            x = 20 + (2 * k + m) * 175
            legend.append('<line x1="%d" x2="%d" y1="16" y2="16" stroke="%s" stroke-width="2"%s/>' % (x, x + 24, colour, dash))
            legend.append('<text x="%d" y="20" font-size="11">%s %s</text>' % (x + 28, model, who))
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">' % (2 * W, 30 + 2 * H),
           '<rect width="100%" height="100%" fill="white"/>'] + legend + parts + [
           '<text x="%d" y="%d" font-size="10" fill="#666" text-anchor="end">bench/run.sh scaling, %s, %s</text>'
           % (2 * W - 6, 30 + 2 * H - 4, doc["dtype"], doc["started"]), "</svg>"]
    tmp = "%s.tmp.%d" % (dst, os.getpid())  # written whole, then renamed
    with open(tmp, "w") as f:
        f.write("\n".join(svg) + "\n")
    os.replace(tmp, dst)


if __name__ == "__main__":
    main()
