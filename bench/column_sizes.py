#!/usr/bin/env python3
"""Bytes per allocation call of each column of a memloupe trace (docs/FORMAT.md §9).

Reads a finalised trace (column-form events chunks, type 4), inflates each chunk
with the zstd command-line tool, splits it into its eight streams and compresses
each stream of each chunk alone at --level (6: the finaliser's). Version 5's
laned streams (head, word, size, ref) are compressed as their lanes one after
the other, as the chunk lays them out; its order stream is a column of its own. Prints, per
column, the raw and the compressed bytes per call, then the file's bytes per
call. Row-form chunks (type 2, not finalised) are counted whole, as "rows".
The analysis index (type 5) and the rest of the file (header, symbols, types,
snapshots) are counted as stored, to show what the file adds to the events.

usage: column_sizes.py TRACE CALLS [--level 6]
  CALLS: allocation calls of the run (`memloupe summary`'s "allocating calls").
"""
import argparse
import ctypes
import ctypes.util
import os
import struct
import subprocess

STREAMS = ["head", "time", "word", "size", "addr", "ref", "stack", "misc"]
LANED = {"head", "word", "size", "ref"}  # version 5 (docs/FORMAT.md §5.8)


def varint(buf, at):
    value = shift = 0
    while True:
        b = buf[at]
        at += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, at


class ZstdStream:
    """Inflates the pieces of one zstd stream in order, through libzstd's
    streaming API (the CLI does not write what precedes a frame's cut)."""

    class Buffer(ctypes.Structure):
        _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]

    lib = None

    def __init__(self):
        if ZstdStream.lib is None:
            ZstdStream.lib = ctypes.CDLL(ctypes.util.find_library("zstd"))
            ZstdStream.lib.ZSTD_createDStream.restype = ctypes.c_void_p
            ZstdStream.lib.ZSTD_decompressStream.restype = ctypes.c_size_t
            ZstdStream.lib.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self.ctx = ZstdStream.lib.ZSTD_createDStream()

    def piece(self, data, raw_len):
        src = ctypes.create_string_buffer(bytes(data), len(data))
        dst = ctypes.create_string_buffer(raw_len)
        inb = self.Buffer(ctypes.cast(src, ctypes.c_void_p), len(data), 0)
        outb = self.Buffer(ctypes.cast(dst, ctypes.c_void_p), raw_len, 0)
        while inb.pos < inb.size:
            before = (inb.pos, outb.pos)
            ZstdStream.lib.ZSTD_decompressStream(self.ctx, ctypes.byref(outb), ctypes.byref(inb))
            if (inb.pos, outb.pos) == before:
                break
        return dst.raw[:outb.pos]


def zstd(data, level, decompress=False):
    args = ["zstd", "-q", "-c"] + (["-d"] if decompress else [f"-{level}", "--no-check"])
    return subprocess.run(args, input=data, stdout=subprocess.PIPE, check=True).stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("calls", type=int)
    p.add_argument("--level", type=int, default=6)
    a = p.parse_args()
    data = open(a.trace, "rb").read()
    laned = struct.unpack_from("<I", data, 8)[0] >= 5
    raw = {s: 0 for s in ["order"] + STREAMS + ["rows"]}
    packed = dict(raw)
    stored_by_type = {}
    at = 16
    while at + 24 <= len(data):
        magic, ctype, flags, _, stored, raw_len = struct.unpack_from("<IBBHII", data, at)
        if magic != 0x4B434C4D:
            break
        payload = data[at + 24:at + 24 + stored]
        at += 24 + stored
        stored_by_type[ctype] = stored_by_type.get(ctype, 0) + 24 + stored
        if ctype not in (2, 4):
            continue
        if flags & 2:  # a piece of the events' zstd stream (docs/FORMAT.md §3)
            if flags & 4:
                pieces = ZstdStream()
            payload = pieces.piece(payload, raw_len)
        elif flags & 1:
            payload = zstd(payload, 0, decompress=True)
        if ctype == 2:
            raw["rows"] += len(payload)
            packed["rows"] += len(zstd(payload, a.level))
            continue
        pos = 17  # u64 start time, u64 id base, u8 stream count
        lanes = 1
        names = STREAMS
        if laned:  # u8 lane count, the order stream, each laned stream's lanes
            lanes = payload[pos]
            pos += 1
            names = ["order"] + [s for s in STREAMS for _ in range(lanes if s in LANED else 1)]
        lengths = []
        for _ in names:
            n, pos = varint(payload, pos)
            lengths.append(n)
        column = {}
        for name, n in zip(names, lengths):
            column[name] = column.get(name, b"") + payload[pos:pos + n]
            pos += n
        for name, stream in column.items():
            raw[name] += len(stream)
            packed[name] += len(zstd(stream, a.level)) if stream else 0
    print(f"{'column':8} {'raw B/call':>11} {'zstd B/call':>12}")
    for name in ["order"] + STREAMS + ["rows"]:
        if raw[name]:
            print(f"{name:8} {raw[name] / a.calls:11.3f} {packed[name] / a.calls:12.3f}")
    print(f"{'events':8} {sum(raw.values()) / a.calls:11.3f} {sum(packed.values()) / a.calls:12.3f}")
    index = stored_by_type.get(5, 0)
    events = stored_by_type.get(2, 0) + stored_by_type.get(4, 0)
    other = os.path.getsize(a.trace) - index - events
    print(f"{'index':8} {'':11} {index / a.calls:12.3f}   (analysis index, as stored)")
    print(f"{'other':8} {'':11} {other / a.calls:12.3f}   (header, symbols, types, snapshots, as stored)")
    print(f"{'file':8} {'':11} {os.path.getsize(a.trace) / a.calls:12.3f}")


if __name__ == "__main__":
    main()
