#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""pngcheck.py FILE WIDTH HEIGHT: exit 0 if FILE is a valid 8-bit RGB/RGBA
PNG of that size (chunk CRCs checked) that is not blank: at least 6
distinct colours among sampled pixels. Standard library only."""
import struct, sys, zlib


def main(path, want_w, want_h):
    b = open(path, "rb").read()
    if b[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s: not a PNG" % path)
    i, idat, hdr = 8, b"", None
    while i < len(b):
        ln, = struct.unpack(">I", b[i:i + 4])
        typ, data = b[i + 4:i + 8], b[i + 8:i + 8 + ln]
        if struct.unpack(">I", b[i + 8 + ln:i + 12 + ln])[0] != zlib.crc32(typ + data):
            sys.exit("%s: bad CRC in %s chunk" % (path, typ))
        if typ == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", data)
        elif typ == b"IDAT":
            idat += data
        i += 12 + ln
    w, h, depth, ctype = hdr[:4]
    if (w, h) != (want_w, want_h) or depth != 8 or ctype not in (2, 6):
        sys.exit("%s: %dx%d depth %d type %d" % (path, w, h, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colors = bytearray(stride), set()
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            c = prev[x - bpp] if x >= bpp else 0
            up = prev[x]
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + up) & 255
            elif f == 3:
                line[x] = (line[x] + (a + up) // 2) & 255
            elif f == 4:
                p = a + up - c
                pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
        if y % 5 == 0:
            colors.update(bytes(line[x:x + 3]) for x in range(0, stride, bpp * 3))
        prev = line
    if len(colors) < 6:
        sys.exit("%s: blank (%d colours)" % (path, len(colors)))


main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
