#!/usr/bin/env python3
"""Checks that a PNG screenshot is not blank: decodes it with zlib alone (8-bit RGB or RGBA,
non-interlaced, what Chromium writes) and requires at least MIN_COLORS distinct colors and at
least MIN_INK of the pixels differing from the most common color (the background).
usage: png_variety.py FILE.png [MIN_COLORS [MIN_INK]]; prints the numbers; exit 0 or 1."""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, color, _, _, interlace = ihdr
    if depth != 8 or color not in (2, 6) or interlace != 0:
        raise ValueError("unsupported PNG: depth %d color type %d interlace %d" % (depth, color, interlace))
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, off = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[off], bytearray(raw[off + 1:off + 1 + stride])
        off += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    path = sys.argv[1]
    min_colors = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    min_ink = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
    width, height, bpp, rows = decode(path)
    counts = {}
    for line in rows:
        for i in range(0, len(line), bpp):
            px = line[i:i + 3]
            counts[px] = counts.get(px, 0) + 1
    total = width * height
    background = max(counts.values())
    ink = 1.0 - background / total
    print("%s: %dx%d, %d distinct colors, %.1f%% of the pixels not the background"
          % (path, width, height, len(counts), 100 * ink))
    if len(counts) < min_colors or ink < min_ink:
        print("blank or nearly blank: want at least %d colors and %.1f%% ink" % (min_colors, 100 * min_ink))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
