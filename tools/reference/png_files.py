"""Writes the PNG files tests/io/test_png.cpp reads, with Python's zlib only (no imaging
library): a PNG written by a program other than libpng, read back by attn as the same pixels.

  /usr/bin/python3 tools/reference/png_files.py   # -> tests/reference/png/*.png

Every picture is 7 wide and 5 high (odd, not square: a swapped width and height shows), its
pixel (x, y), channel c is (x * 37 + y * 11 + c * 101) % 256, the formula the test repeats.
The RGB file filters each row differently (PNG's filter types 0 to 4: none, Sub, Up, Average,
Paeth), so the reader's unfiltering is checked as well; the others use filter 0.
"""
import os
import struct
import zlib

W, H = 7, 5
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "reference", "png")


def value(x, y, c):
    return (x * 37 + y * 11 + c * 101) % 256


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def filtered(rows, bpp, filters):
    """The image data before compression: each row as its filter type byte and filtered bytes."""
    out = b""
    prior = bytes(len(rows[0]))
    for row, kind in zip(rows, filters):
        line = bytearray()
        for i, v in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b = prior[i]
            c = prior[i - bpp] if i >= bpp else 0
            predictor = [0, a, b, (a + b) // 2, paeth(a, b, c)][kind]
            line.append((v - predictor) % 256)
        out += bytes([kind]) + bytes(line)
        prior = row
    return out


def png(colour_type, bit_depth, rows, bpp, filters=None, extra=b""):
    header = struct.pack(">IIBBBBB", W, H, bit_depth, colour_type, 0, 0, 0)
    data = filtered(rows, bpp, filters or [0] * H)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra + chunk(b"IDAT", zlib.compress(data, 9))
            + chunk(b"IEND", b""))


def main():
    os.makedirs(OUT, exist_ok=True)
    rgb = [bytes(value(x, y, c) for x in range(W) for c in range(3)) for y in range(H)]
    files = {
        "python_rgb.png": png(2, 8, rgb, 3, filters=[0, 1, 2, 3, 4]),
        # Alpha 255 everywhere: read as RGB.
        "python_rgba_opaque.png": png(6, 8, [bytes(v for x in range(W) for v in
                                                   [value(x, y, 0), value(x, y, 1), value(x, y, 2), 255])
                                             for y in range(H)], 4),
        # Pixel (3, 2) half transparent: refused.
        "python_rgba_transparent.png": png(6, 8, [bytes(v for x in range(W) for v in
                                                        [value(x, y, 0), value(x, y, 1), value(x, y, 2),
                                                         128 if (x, y) == (3, 2) else 255])
                                                  for y in range(H)], 4),
        "python_gray.png": png(0, 8, [bytes(value(x, y, 0) for x in range(W)) for y in range(H)], 1),
        # 16 bits a channel: each value v stored as v * 257 (v in both bytes), read back as v. Its
        # sRGB chunk says the values are sRGB-encoded: without it libpng takes 16-bit values as
        # linear light and converts them.
        "python_rgb16.png": png(2, 16, [bytes(b for x in range(W) for c in range(3) for b in
                                              [value(x, y, c), value(x, y, c)]) for y in range(H)], 6,
                                extra=chunk(b"sRGB", b"\x00")),
        # The same without the sRGB chunk: still read as v (stored values come back as stored).
        "python_rgb16_plain.png": png(2, 16, [bytes(b for x in range(W) for c in range(3) for b in
                                                    [value(x, y, c), value(x, y, c)]) for y in range(H)], 6),
        # A gAMA chunk of 1.0 (linear light): read as stored, not converted to sRGB.
        "python_gamma1.png": png(2, 8, rgb, 3, extra=chunk(b"gAMA", struct.pack(">I", 100000))),
    }
    # A palette of the 35 pixels' colours, each pixel its own index.
    palette = b"".join(bytes([value(x, y, 0), value(x, y, 1), value(x, y, 2)]) for y in range(H) for x in range(W))
    files["python_palette.png"] = png(3, 8, [bytes(y * W + x for x in range(W)) for y in range(H)], 1,
                                      extra=chunk(b"PLTE", palette))
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(name, len(data), "bytes")


if __name__ == "__main__":
    main()
