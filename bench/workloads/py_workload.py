"""Workload (c): Debian's python3 doing ordinary work — build records in dicts and
lists, round-trip them through json, sort, group, format strings. Seeded and free of
hash-order dependence (the suite also sets PYTHONHASHSEED=0), so the printed checksum
is the same on every run.

usage: python3 py_workload.py [ROUNDS]
"""
import json
import random
import sys
import zlib


def make_records(rng, n):
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    return [
        {
            "id": i,
            "name": "-".join(rng.choice(words) for _ in range(3)),
            "score": rng.random() * 100.0,
            "tags": [rng.choice(words) for _ in range(rng.randint(1, 6))],
            "nested": {"depth": rng.randint(0, 9), "path": [rng.randint(0, 99) for _ in range(4)]},
        }
        for i in range(n)
    ]


def group(records):
    by_tag = {}
    for rec in records:
        for tag in rec["tags"]:
            by_tag.setdefault(tag, []).append(rec["id"])
    return {tag: sorted(ids) for tag, ids in sorted(by_tag.items())}


def round_trip(records):
    text = json.dumps(records, sort_keys=True)
    back = json.loads(text)
    assert back == records
    return text


def one_round(rng, size):
    records = make_records(rng, size)
    text = round_trip(records)
    groups = group(records)
    records.sort(key=lambda r: (r["nested"]["depth"], -r["score"], r["name"]))
    lines = ["%05d %-24s %8.3f" % (r["id"], r["name"], r["score"]) for r in records[:200]]
    digest = zlib.crc32(text.encode())
    digest = zlib.crc32("\n".join(lines).encode(), digest)
    return zlib.crc32(json.dumps(groups).encode(), digest)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    rng = random.Random(1234)
    checksum = 0
    for _ in range(rounds):
        checksum = zlib.crc32(b"%d" % one_round(rng, 2000), checksum)
    print("py_workload rounds=%d checksum=%08x" % (rounds, checksum))


if __name__ == "__main__":
    main()
