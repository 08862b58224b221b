#!/usr/bin/env python3
"""Known-answer vectors for tfhe-sbc's keyed BLAKE2b XOF (construction v2), from Python's hashlib (an
independent BLAKE2 implementation, the reference C code).
Run: python3 tests/kat/make_vectors.py > tests/kat/blake2b_xof_v2.txt

Format: one vector per line, `domain seed_hex offset_bytes length_bytes output_hex`, where output is the
stream's bytes [offset, offset + length) and

    block_i = BLAKE2b-512(key = seed, message = LE64(i), person = P)

with P = "TFHE-SBC rng v2." for domain `rng` (the device's secret stream) and P = "TFHE-SBC mask v2" for
domain `mask` (the public mask expansion, wire XOF id 2). A last domain, `ratchet`, gives the stream after
one key erasure of the rng domain: the new key is the first 32 bytes of block 2^64 - 1 of the old key.
"""
import hashlib

PERSON = {"rng": b"TFHE-SBC rng v2.", "mask": b"TFHE-SBC mask v2"}


def block(person: bytes, seed: bytes, i: int) -> bytes:
    return hashlib.blake2b(i.to_bytes(8, "little"), digest_size=64, key=seed, person=person).digest()


def stream(person: bytes, seed: bytes, offset: int, length: int) -> bytes:
    first, last = offset // 64, (offset + length + 63) // 64
    data = b"".join(block(person, seed, i) for i in range(first, last))
    start = offset - first * 64
    return data[start : start + length]


seeds = [bytes(32), bytes(range(32)), bytes([0xFF] * 32), hashlib.sha256(b"tfhe-sbc kat").digest()]
cases = [(0, 64), (0, 200), (63, 2), (64 * 1000, 64), (12345, 77)]
for domain in ("rng", "mask"):
    for seed in seeds:
        for offset, length in cases:
            print(domain, seed.hex(), offset, length, stream(PERSON[domain], seed, offset, length).hex())
for seed in seeds:
    ratcheted = block(PERSON["rng"], seed, 2**64 - 1)[:32]
    print("ratchet", seed.hex(), 0, 100, stream(PERSON["rng"], ratcheted, 0, 100).hex())
