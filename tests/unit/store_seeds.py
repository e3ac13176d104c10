#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""store_seeds.py DIR: two segments of iolens record's store written by an encoder of its own (CRC-32C and zlib here, not the C code's): two_frames, and torn (cut inside its second frame). test_store.c reads them, and they seed fuzz_store."""
import struct, sys, zlib
def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82f63b78 if crc & 1 else crc >> 1
    return crc ^ 0xffffffff
assert crc32c(b"123456789") == 0xe3069283
def frame(real, mono, kind, payload, codec=0):
    raw = len(payload)
    body = zlib.compress(payload) if codec else payload
    head = struct.pack('<IIIIQQHBB', 0x464c4f49, crc32c(body), len(body), raw, real, mono, kind, codec, 0)
    return head + struct.pack('<I', crc32c(head)) + body
head = b'IOLREC\x00\x01' + struct.pack('<IIQQ', 1, 0, 1765000000000000000, 5000000000)
seg = head + frame(1765000000000000000, 5000000000, 1, b'disk vda r/s 12.5\n') + frame(1765000010000000000, 15000000000, 2, b'cpu 1 2 3\n' * 20, 1)
open(sys.argv[1] + '/two_frames', 'wb').write(seg)
open(sys.argv[1] + '/torn', 'wb').write(seg[:-7])
# keyframes: a keyframe (codec 1) of kind 1, a frame of kind 1 compressed against it (codec 2:
# Python's zlib with zdict), one of kind 2 against a keyframe it has not (skipped), and another of
# kind 1 against the same keyframe.
def dict_frame(real, mono, kind, payload, zdict):
    c = zlib.compressobj(6, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, zdict)
    body = c.compress(payload) + c.flush()
    head = struct.pack('<IIIIQQHBB', 0x464c4f49, crc32c(body), len(body), len(payload), real, mono, kind, 2, 0)
    return head + struct.pack('<I', crc32c(head)) + body
key = b'cpu 1 2 3\n' * 20
seg = (head + frame(1765000000000000000, 5000000000, 1, key, 1)
       + dict_frame(1765000010000000000, 15000000000, 1, b'cpu 1 2 4\n' * 20, key)
       + dict_frame(1765000020000000000, 25000000000, 2, b'mem 1\n', b'mem 0\n')
       + dict_frame(1765000030000000000, 35000000000, 1, b'cpu 1 2 5\n' * 20, key))
open(sys.argv[1] + '/keyframes', 'wb').write(seg)
