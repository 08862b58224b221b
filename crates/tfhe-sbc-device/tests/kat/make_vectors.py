#!/usr/bin/env python3
"""Known-answer vectors for tfhe-sbc's BLAKE2b XOF (construction v1), from Python's hashlib (an independent
BLAKE2 implementation, the reference C code). Run: python3 tests/kat/make_vectors.py > tests/kat/blake2b_xof_v1.txt

Format: one vector per line, `seed_hex offset_bytes length_bytes output_hex`, where output is the stream's
bytes [offset, offset + length): block_i = BLAKE2b-512(seed || LE64(i), person = "TFHE-SBC XOF v1.").
"""
import hashlib

PERSON = b"TFHE-SBC XOF v1."


def block(seed: bytes, i: int) -> bytes:
    return hashlib.blake2b(seed + i.to_bytes(8, "little"), digest_size=64, person=PERSON).digest()


def stream(seed: bytes, offset: int, length: int) -> bytes:
    first, last = offset // 64, (offset + length + 63) // 64
    data = b"".join(block(seed, i) for i in range(first, last))
    start = offset - first * 64
    return data[start : start + length]


seeds = [bytes(32), bytes(range(32)), bytes([0xFF] * 32), hashlib.sha256(b"tfhe-sbc kat").digest()]
cases = [(0, 64), (0, 200), (63, 2), (64 * 1000, 64), (12345, 77)]
for seed in seeds:
    for offset, length in cases:
        print(seed.hex(), offset, length, stream(seed, offset, length).hex())
