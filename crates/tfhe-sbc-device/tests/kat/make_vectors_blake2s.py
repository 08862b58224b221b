#!/usr/bin/env python3
"""Known-answer vectors for tfhe-sbc's keyed BLAKE2s XOF (construction v3, the default on 32-bit targets),
from Python's hashlib (an independent BLAKE2 implementation, the reference C code).
Run: python3 tests/kat/make_vectors_blake2s.py > tests/kat/blake2s_xof_v3.txt

Format: one vector per line, `domain seed_hex offset_bytes length_bytes output_hex`, where output is the
stream's bytes [offset, offset + length) and

    block_i = BLAKE2s-256(key = seed, message = LE64(i), person = P)

with P = "TSBCrng3" for domain `rng` (the device's secret stream) and P = "TSBCmsk3" for domain `mask` (the
public mask expansion, wire XOF id 3). Domain `ratchet` gives the stream after one key erasure of the rng
domain: the new key is block 2^64 - 1 of the old key (all 32 bytes). Domain `reseed` gives the stream after
`reseed(entropy)` with entropy = the 13 bytes b"trng bytes v3": the new key is
BLAKE2s-256(key = block 2^64 - 1, message = entropy, person = "TSBCrsd3").
"""
import hashlib

PERSON = {"rng": b"TSBCrng3", "mask": b"TSBCmsk3"}
RESEED = b"TSBCrsd3"
ENTROPY = b"trng bytes v3"


def block(person: bytes, seed: bytes, i: int) -> bytes:
    return hashlib.blake2s(i.to_bytes(8, "little"), digest_size=32, key=seed, person=person).digest()


def stream(person: bytes, seed: bytes, offset: int, length: int) -> bytes:
    first, last = offset // 32, (offset + length + 31) // 32
    data = b"".join(block(person, seed, i) for i in range(first, last))
    start = offset - first * 32
    return data[start : start + length]


seeds = [bytes(32), bytes(range(32)), bytes([0xFF] * 32), hashlib.sha256(b"tfhe-sbc kat").digest()]
cases = [(0, 32), (0, 200), (31, 2), (32 * 1000, 32), (12345, 77)]
for domain in ("rng", "mask"):
    for seed in seeds:
        for offset, length in cases:
            print(domain, seed.hex(), offset, length, stream(PERSON[domain], seed, offset, length).hex())
for seed in seeds:
    ratcheted = block(PERSON["rng"], seed, 2**64 - 1)
    print("ratchet", seed.hex(), 0, 100, stream(PERSON["rng"], ratcheted, 0, 100).hex())
for seed in seeds:
    ratchet_key = block(PERSON["rng"], seed, 2**64 - 1)
    reseeded = hashlib.blake2s(ENTROPY, digest_size=32, key=ratchet_key, person=RESEED).digest()
    print("reseed", seed.hex(), 0, 100, stream(PERSON["rng"], reseeded, 0, 100).hex())
