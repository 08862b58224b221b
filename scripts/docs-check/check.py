#!/usr/bin/env python3
"""An independent reader of tfhe-sbc's key files and compact-list frames, written from docs/ alone
(docs/key-files.md, docs/compact-list.md, docs/wire-format.md): no code of the project is imported.

    check.py --keys DIR [--boolean-keys DIR] [--device ID] [--frame FILE[=v,v,...]]...

DIR is a key set made by `tfhe-sbc-keys init --parameters integer --compact-list` (and `issue --mode
compact-list` for --device); --boolean-keys a boolean key set (`init --parameters tfhe-lib`). Each --frame is a
compact-list frame (kind 3) of that device; `=v,v,...` are the readings it must decrypt to. Every check that
fails is printed and the exit status is 1. Standard library only, no network.
"""
import argparse
import hashlib
import math
import struct
import sys

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def u8(b, o):
    return b[o]


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


def words(b, o, n):
    return list(struct.unpack_from("<%dQ" % n, b, o))


def b2b(data, size, key=b"", person=b""):
    return hashlib.blake2b(data, digest_size=size, key=key, person=person).digest()


# ---- docs/key-files.md: the envelope of client_key.bin and server_key.bin -------------------------------
def envelope(path, kind):
    f = open(path, "rb").read()
    check(f[0:8] == b"TSBCKEYF", f"{path}: magic TSBCKEYF")
    check(f[8] == 1, f"{path}: version 1")
    check(f[9] == kind, f"{path}: kind {kind}")
    length = u64(f, 48)
    check(len(f) == 56 + length + 32, f"{path}: length 56 + L + 32 (L = {length})")
    check(b2b(f[: 56 + length], 32) == f[56 + length :], f"{path}: BLAKE2b-256 check of bytes 0 .. 56 + L")
    return {"set": u16(f, 10), "key_id": u32(f, 12), "fingerprint": f[16:48], "payload": f[56 : 56 + length]}


def integer_fingerprint(payload):
    # docs/key-files.md, "Server key fingerprint": the KSK's word count at payload offset 32, words from 40.
    tags = [u32(payload, o) for o in range(0, 32, 4)]
    check(tags == [3, 10, 1, 2, 0, 0, 0, 2], f"server key payload tags {tags} (HL V3, integer HL V10, integer V1, "
          "shortint V2, AP V0, Standard, standard AP V0, LweKeyswitchKey V2)")
    count = u64(payload, 32)
    check(count == 2048 * 4 * 919, f"integer KSK words: {count} = 2048 * 4 * 919")
    domain = b"tfhe-sbc integer server key fingerprint v1"
    check(len(domain) == 42, "integer domain string is 42 bytes")
    return b2b(domain + payload[40 : 40 + 8 * count], 32)


def boolean_fingerprint(payload, n, k, ks_level, lwe_dimension):
    count = k * n * ks_level * (lwe_dimension + 1)
    start = len(payload) - 72 - 4 * count
    check(u64(payload, start - 8) == count, f"boolean KSK word count {count} at payload end - 72 - 4 * count - 8")
    return b2b(b"tfhe-sbc server key fingerprint v1" + payload[start : start + 4 * count], 32)


def binary(ws):
    return set(ws) <= {0, 1}


def rev_product_word(poly, ones, k, n):
    """Word k of poly * rev(s) (negacyclic, u64 wrapping), s given by the positions of its ones.
    docs/compact-list.md: word k = sum_{i<=k} a_i s_{N-1-k+i} - sum_{i>k} a_i s_{i-k-1}."""
    acc = 0
    for j in ones:  # s_j = 1 contributes a_{j+k+1-N} (if j >= N-1-k) or -a_{j+k+1} (otherwise)
        i = j + k + 1
        acc += poly[i - n] if i >= n else -poly[i]
    return acc % (1 << 64)


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def tuniform_variance(b):
    return ((1 << (2 * b + 1)) + 1) / 6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", required=True)
    ap.add_argument("--boolean-keys", action="append", default=[], help="a boolean key set (sets 1 to 3)")
    ap.add_argument("--device", type=int)
    ap.add_argument("--frame", action="append", default=[])
    ap.add_argument("--bool-list", help="a bare list of bools, FILE=0,1,...: its readings")
    ap.add_argument("--counting-stream", help="length-delimited frames, frame i one u8 reading i mod 256")
    ap.add_argument("--fleet-device", type=int, help="a fleet device of --keys: its key is the client key's GLWE key")
    ap.add_argument("--plain-keys", help="an integer key set made without --compact-list")
    args = ap.parse_args()
    d = args.keys
    n = 2048

    # ---- server_key.bin, client_key.bin: envelopes, fingerprint ----
    server = envelope(f"{d}/server_key.bin", 2)
    client = envelope(f"{d}/client_key.bin", 1)
    check(server["set"] == 4 and client["set"] == 4, "parameter set 4 in both envelopes")
    check(server["key_id"] == client["key_id"], f"same key id 0x{server['key_id']:08x}")
    fp = integer_fingerprint(server["payload"])
    check(fp == server["fingerprint"] == client["fingerprint"],
          f"recomputed fingerprint {fp.hex()[:16]}.. = both envelopes'")

    # ---- client_key.bin payload: where the keys are (docs/key-files.md) ----
    p = client["payload"]
    tags = [u32(p, o) for o in range(0, 32, 4)]
    check(tags == [1, 9, 0, 1, 0, 0, 0, 0], f"client key payload tags {tags}")
    check(u64(p, 32) == n, "GLWE key: 2048 words at payload offset 40")
    glwe = words(p, 40, n)
    check(binary(glwe), "GLWE key words are 0 or 1")
    check(u32(p, 16424) == 0 and u64(p, 16428) == n, "PolynomialSize V0 2048 after the GLWE key")
    check(u32(p, 16436) == 0 and u64(p, 16440) == 918, "LWE key: V0, 918 words at payload offset 16448")
    check(binary(words(p, 16448, 918)), "LWE key words are 0 or 1")
    check(p[24008] == 0, "wopbs_parameters: None (byte 0 at payload offset 24008)")
    check(p[24009] == 1, "dedicated_compact_private_key: Some (byte 1 at payload offset 24009)")
    check([u32(p, o) for o in (24010, 24014, 24018)] == [0, 0, 0] and u64(p, 24022) == n,
          "compact private key: three V0 tags, 2048 words at payload offset 24030")
    cs = words(p, 24030, n)
    check(binary(cs), "compact private key words are 0 or 1")
    ones = [i for i, bit in enumerate(cs) if bit]
    print(f"     compact private key weight {len(ones)}, GLWE key weight {sum(glwe)}")

    # ---- compact_public_key.tscp ----
    f = open(f"{d}/compact_public_key.tscp", "rb").read()
    check(len(f) == 32832, "compact public-key file: 32,832 bytes")
    check(f[0:4] == b"TSCP" and f[4] == 1 and f[5] == 0 and u16(f, 6) == 1 and u16(f, 8) == 4 and u16(f, 10) == 0,
          "TSCP header: magic, version 1, reserved 0, parameters 1, set 4, reserved 0")
    check(u32(f, 12) == server["key_id"], "TSCP key id = the envelope's")
    check(f[16:48] == fp, "TSCP server key fingerprint = the recomputed one")
    check(b2b(f[:32816], 16, person=b"TFHE-SBC cpk v1.") == f[32816:], "TSCP check: BLAKE2b-128, person 'TFHE-SBC cpk v1.'")
    a = words(f, 48, n)
    b = words(f, 48 + 8 * n, n)
    errs = [signed((b[k] - rev_product_word(a, ones, k, n)) % (1 << 64)) for k in range(n)]
    bound = max(abs(e) for e in errs)
    check(bound <= 1 << 17, f"b - a * rev(s) is TUniform(17) noise: max |e| = {bound} <= 2^17")
    e_sq = sum(x * x for x in errs)
    e_sum = sum(errs)
    prefix = []  # P_k = e_0 + ... + e_k
    for x in errs:
        prefix.append((prefix[-1] if prefix else 0) + x)
    print(f"     key noise e: mean square {e_sq / n:.4e} (TUniform(17): {tuniform_variance(17):.4e})")

    # ---- key_store.bin (postcard) ----
    ks = open(f"{d}/key_store.bin", "rb").read()
    check(ks[0:8] == b"TSBCKEYS" and ks[8] == 2, "key store: magic TSBCKEYS, version 2")
    check(b2b(ks[:-32], 32) == ks[-32:], "key store: BLAKE2b-256 of every byte before it")
    at = [9]

    def varint():
        v, shift = 0, 0
        while True:
            byte = ks[at[0]]
            at[0] += 1
            v |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return v

    def blob():
        length = varint()
        at[0] += length
        return ks[at[0] - length : at[0]]

    check(blob() == fp, "key store: server key fingerprint = the recomputed one")
    records = {}
    for _ in range(varint()):
        device_id, key_id, set_id, mac = varint(), varint(), varint(), blob()
        mode = ks[at[0]]
        has_ksk = ks[at[0] + 1]
        at[0] += 2
        if has_ksk:
            blob(), blob()
        records[device_id] = (key_id, set_id, mac, mode)
    check(at[0] == len(ks) - 32, f"key store: {len(records)} record(s), nothing left over")

    # ---- compact-list frames ----
    if args.device is not None:
        cred = open(f"{d}/devices/{args.device}.tsdc", "rb").read()
        check(cred[0:4] == b"TSDC" and cred[4] == 1 and cred[5] == 2, "credentials: TSDC v1, public-key mode (2)")
        check(b2b(cred[:-16], 16, person=b"TFHE-SBC cred v1") == cred[-16:], "credentials check")
        mac_key = cred[20:52]
        check(records[args.device][2] == mac_key, "the key store holds the credentials' MAC key")
        dev_tscp = open(f"{d}/devices/{args.device}.tscp", "rb").read()
        check(dev_tscp == f, "devices/<ID>.tscp is the key set's compact_public_key.tscp")
    def read_frame(fr, name, expect, quiet=False):
        """Checks one compact-list frame from docs/ and returns its errors (error, body position)."""
        global check
        outer = check
        if quiet:  # print only failures
            check = lambda cond, what: cond or outer(cond, what)
        try:
            return read_frame_inner(fr, name, expect)
        finally:
            check = outer

    def read_frame_inner(fr, name, expect):
        samples = []
        check(fr[0:4] == b"TSBC" and fr[4] == 2 and fr[5] == 3 and u16(fr, 6) == 4 and fr[8] == 0,
              f"{name}: TSBC v2, kind 3, set 4, xof 0")
        w = fr[9]
        length, chunk = u32(fr, 43), u32(fr, 35)
        rb = min(1024, length - 1024 * chunk)  # this chunk's reading bytes
        v = rb * 8 // w
        blocks = w // 2
        lwes = -(-v * blocks // 2)
        bins = -(-lwes // n)
        payload = 211 + 8 * (n * bins + lwes) + 16 * v
        check(len(fr) == 47 + payload + 16, f"{name}: {len(fr)} B = 47 + (211 + 8 (2048 bins + lwes) + 16 v) + 16 "
              f"(b {rb}, v {v}, lwes {lwes}, bins {bins})")
        if args.device is not None:
            check(b2b(fr[:-16], 16, key=mac_key, person=b"TFHE-SBC MAC v2.") == fr[-16:], f"{name}: MAC")
        return read_list(fr[47:-16], name, v, blocks, expect)

    def read_list(L, name, v, blocks, expect, boolean=False):
        """Checks one serialized CompactCiphertextList (docs/compact-list.md, "Byte layout"), decrypts it and
        returns its errors (error, body position)."""
        samples = []
        lwes = -(-v * blocks // 2)
        bins = -(-lwes // n)
        info_bytes = 8 if boolean else 16
        check(len(L) == 211 + 8 * (n * bins + lwes) + info_bytes * v, f"{name}: list of {len(L)} B = 211 + 8 W + {info_bytes} v")
        # docs/compact-list.md, "Byte layout"
        check(L[0:11] == struct.pack("<Q", 3) + b"0.5" and u32(L, 11) == 0 and L[15:26] == struct.pack("<Q", 3) + b"0.1",
              f"{name}: serialization header")
        check(u64(L, 26) == 37 and L[34:71] == b"high_level_api::CompactCiphertextList", f"{name}: type name")
        check([u32(L, o) for o in (71, 75, 79, 83)] == [1, 1, 2, 0], f"{name}: version tags 1 1 2 0")
        W = u64(L, 87)
        check(W == bins * n + lwes, f"{name}: W = {W} words")
        T = 95 + 8 * W
        trailer = [(u32(L, T + o), u64(L, T + o + 4)) for o in (0, 12)]
        check(trailer == [(0, n + 1), (0, lwes)], f"{name}: LweSize 2049, LweCiphertextCount {lwes}")
        check(u32(L, T + 24) == 0 and L[T + 28 : T + 44] == bytes(16) and u64(L, T + 44) == 64, f"{name}: native modulus")
        check([(u32(L, T + o), u64(L, T + o + 4)) for o in (52, 64, 76)] == [(0, 15), (0, 4), (0, 4)],
              f"{name}: degree 15, moduli 4 and 4")
        check(u32(L, T + 88) == 1 and u32(L, T + 92) == 0 and u64(L, T + 96) == v, f"{name}: RequiresCasting, {v} values")
        if boolean:
            info = [(u32(L, T + 104 + 8 * i), u32(L, T + 108 + 8 * i)) for i in range(v)]
            check(all(x == (1, 2) for x in info), f"{name}: DataKind V1 Boolean x {v}")
        else:
            info = [(u32(L, T + 104 + 16 * i), u32(L, T + 108 + 16 * i), u64(L, T + 112 + 16 * i)) for i in range(v)]
            check(all(x == (1, 0, blocks) for x in info), f"{name}: DataKind V1 Unsigned({blocks}) x {v}")
        end = T + 104 + info_bytes * v
        check(u32(L, end) == 0 and u64(L, end + 4) == 0 and end + 12 == len(L), f"{name}: empty tag, list ends")
        # decrypt: phase_j = body_j - (mask * rev(s))[N-1-j]
        plain = []
        for j in range(lwes):
            t, pos = divmod(j, n)
            if pos == 0:
                mask = words(L, 95 + 8 * t * n, n)
            body = u64(L, 95 + 8 * (bins * n + j))
            phase = (body - rev_product_word(mask, ones, n - 1 - pos, n)) % (1 << 64)
            p_j = ((phase + (1 << 58)) >> 59) % 32
            samples.append((signed((phase - (p_j << 59)) % (1 << 64)), n - 1 - pos))
            plain.append(p_j)
        check(all(x < 16 for x in plain), f"{name}: every plaintext below 16 (padding bit 0)")
        bits = []
        for x in plain:
            bits += [x & 3, x >> 2]
        values = [sum(bits[i * blocks + m] << (2 * m) for m in range(blocks)) for i in range(v)]
        if expect is not None:
            shown = values if v <= 8 else f"{values[:8]} ... ({v} values)"
            check(values == expect, f"{name}: decrypts to {shown}")
        else:
            print(f"     {name}: decrypts to {values[:8]}{' ...' if v > 8 else ''} ({v} values)")
        return samples

    samples = []
    for spec in args.frame:
        path, eq, expect = spec.partition("=")
        want = [int(x, 0) for x in expect.split(",") if x] if eq else None
        samples += read_frame(open(path, "rb").read(), path.rsplit("/", 1)[-1], want)
    if args.bool_list:
        path, _, expect = args.bool_list.partition("=")
        want = [int(x) for x in expect.split(",")]
        samples += read_list(open(path, "rb").read(), path.rsplit("/", 1)[-1], len(want), 1, want, boolean=True)
    independent = []
    if args.counting_stream:
        data = open(args.counting_stream, "rb").read()
        at, i = 0, 0
        while at < len(data):
            size = u32(data, at)
            independent += read_frame(data[at + 4 : at + 4 + size], f"stream frame {i}", [i % 256], quiet=True)
            at += 4 + size
            i += 1
        check(at == len(data) and i > 0, f"{args.counting_stream}: {i} frames, each decrypts to its index mod 256")
        samples += independent
    if samples:
        # docs/compact-list.md, "Noise": error at body position k = e2 + (e * rev(r))_k - (e1 * rev(s))_k.
        sigma2 = tuniform_variance(17)
        bound = (2 * n + 1) * (1 << 17)
        check(max(abs(x) for x, _ in samples) <= bound, f"every error within (2N + 1) 2^17 = {bound}")
        # This key's exact expectation over r, e1, e2: sigma^2 (1 + wt(s)) + sum(e^2)/4 + (2 P_k - sum(e))^2 / 4.
        if not independent:
            print(f"     {len(samples)} LWEs, no --counting-stream: the variance needs many bins (one r, e1 each)")
            samples = []
    if samples:
        samples = independent
        var = sum(x * x for x, _ in samples) / len(samples)
        given_key = sum(sigma2 * (1 + len(ones)) + e_sq / 4 + (2 * prefix[k] - e_sum) ** 2 / 4
                        for _, k in samples) / len(samples)
        ensemble = (1 + n / 2 + len(ones)) * sigma2
        print(f"     {len(samples)} LWEs of {len(samples) // 2} bins: mean square error {var:.4e} = 2^{math.log2(var) / 2:.2f} squared; "
              f"this key's expectation {given_key:.4e} (ratio {var / given_key:.3f}); over keys "
              f"(1 + N/2 + wt(s)) sigma^2 = {ensemble:.4e}, (N + 1) sigma^2 = {(n + 1) * sigma2:.4e}")
        check(0.75 < var / given_key < 1.33, "error variance within 25 % of this key's expectation (800 samples: about 7 % std)")

    if args.fleet_device is not None:
        cred = open(f"{d}/devices/{args.fleet_device}.tsdc", "rb").read()
        check(cred[0:4] == b"TSDC" and cred[5] == 0 and len(cred) == 324, "fleet credentials: TSDC, mode 0, 324 bytes")
        packed = cred[52:-16]
        bits = [(packed[i // 8] >> (i % 8)) & 1 for i in range(n)]
        check(bits == glwe, "the fleet device's key = client_key.bin's GLWE key (payload offset 40)")

    if args.plain_keys:
        ps = envelope(f"{args.plain_keys}/server_key.bin", 2)
        pc = envelope(f"{args.plain_keys}/client_key.bin", 1)
        check(integer_fingerprint(ps["payload"]) == ps["fingerprint"] == pc["fingerprint"], "plain set: fingerprint")
        q = pc["payload"]
        check(u64(q, 32) == n and binary(words(q, 40, n)), "plain set: GLWE key at payload offset 40")
        check(q[24008] == 0 and q[24009] == 0 and len(q) == 31400, "plain set: no compact private key (byte 24009 = 0), payload 31,400 B")

    # docs/key-files.md: set -> (n, k, N, ks_level)
    boolean_sets = {1: (630, 1, 1024, 8), 2: (739, 3, 512, 4), 3: (770, 2, 1024, 5)}
    for bd in args.boolean_keys:
        bs = envelope(f"{bd}/server_key.bin", 2)
        bc = envelope(f"{bd}/client_key.bin", 1)
        check(bs["set"] == bc["set"] and bs["set"] in boolean_sets, f"{bd}: boolean set {bs['set']} in both envelopes")
        bn, bk, bN, bl = boolean_sets[bs["set"]]
        bfp = boolean_fingerprint(bs["payload"], bN, bk, bl, bn)
        check(bfp == bs["fingerprint"] == bc["fingerprint"], f"{bd}: boolean fingerprint {bfp.hex()[:16]}.. recomputed")
        q = bc["payload"]
        check(u32(q, 0) == 0 and u32(q, 4) == 0 and u64(q, 8) == bn, f"{bd}: LWE key, {bn} words at payload offset 16")
        check(binary(struct.unpack_from("<%dI" % bn, q, 16)), f"{bd}: LWE key words (u32) are 0 or 1")
        o = 16 + 4 * bn
        check(u32(q, o) == 0 and u64(q, o + 4) == bk * bN, f"{bd}: GLWE key, {bk * bN} words at payload offset {o + 12}")
        check(binary(struct.unpack_from("<%dI" % (bk * bN), q, o + 12)), f"{bd}: GLWE key words (u32) are 0 or 1")

    print(f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
