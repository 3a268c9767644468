#!/usr/bin/env python3
"""Join PNG frames side by side into one strip (Python standard library only).

    scripts/tools/png-strip.py OUT.png FRAME.png [FRAME.png ...] [--gap N]

Frames must be 8-bit, non-interlaced, and all of the same height; grey, grey + alpha, RGB and
RGBA are read. The strip is an 8-bit RGB PNG (alpha, if any, is dropped), with N white pixels
between frames (default 0). README's pulse strip is made with it.
"""
import os
import struct
import sys
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def read_png(path):
    """(width, height, rows of RGB bytes) of an 8-bit non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(SIGNATURE):
        sys.exit(f"{path}: not a PNG file")
    pos, idat, header = len(SIGNATURE), [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        sys.exit(f"{path}: no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in CHANNELS or interlace != 0:
        sys.exit(f"{path}: only 8-bit, non-interlaced grey, RGB or RGBA PNGs are read")
    n = CHANNELS[colour]
    raw = zlib.decompress(b"".join(idat))
    stride = width * n
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - n] if i >= n else 0
            b = previous[i]
            c = previous[i - n] if i >= n else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + predictor) & 255
            elif kind != 0:
                sys.exit(f"{path}: unknown filter type {kind} in row {y}")
        previous = line
        rgb = bytearray()
        for x in range(width):
            px = line[x * n:(x + 1) * n]
            rgb += bytes(px[0:1] * 3) if n <= 2 else bytes(px[0:3])
        rows.append(rgb)
    return width, height, rows


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def main(argv):
    gap = 0
    if "--gap" in argv:
        i = argv.index("--gap")
        gap = int(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) < 2:
        sys.exit("usage: scripts/tools/png-strip.py OUT.png FRAME.png [FRAME.png ...] [--gap N]")
    out, frames = argv[0], [read_png(p) for p in argv[1:]]
    height = frames[0][1]
    if any(h != height for _, h, _ in frames):
        sys.exit("frames differ in height")
    width = sum(w for w, _, _ in frames) + gap * (len(frames) - 1)
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        for k, (_, _, rows) in enumerate(frames):
            if k:
                raw += b"\xff" * (3 * gap)
            raw += rows[y]
    png = SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(png)
    os.replace(tmp, out)


if __name__ == "__main__":
    main(sys.argv[1:])
