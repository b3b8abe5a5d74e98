"""The explorer's packed weights (viz/explorer.cpp) read back, for the tests that check what a page draws
(tools/explorer_browser_test.py, tests/cli/test_heatmap_html.py). Standard library only."""

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
MISSING = 262143  # the three digits "///": no weight (a cell the view does not draw)


def unpack(att):
    """Replaces att["weights"], packed as 3 base64 digits per weight (18 bits: k in the top 4, m in the low 14,
    the weight m * 10^-(3 + k), 4 significant digits), by nested lists [layers][heads][rows][cols] of floats
    (None where missing). Already-unpacked weights are left as they are."""
    text = att["weights"]
    if not isinstance(text, str):
        return
    L, H, R, C = att["shape"]
    vals = []
    for p in range(0, len(text), 3):
        n = B64.index(text[p]) << 12 | B64.index(text[p + 1]) << 6 | B64.index(text[p + 2])
        k, m = n >> 14, n & 16383
        vals.append(None if n == MISSING else (m / 10 ** (3 + k) if m else 0))
    it = iter(vals)
    att["weights"] = [[[[next(it) for _ in range(C)] for _ in range(R)] for _ in range(H)] for _ in range(L)]
