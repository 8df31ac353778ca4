# Hidden tests of lsm-kv-store-recovery (the corpus prelude defines run, unchanged, Path, json, ...).
import random
import shutil
import struct
import tempfile
import zlib

APP = "/app"
PY_LOOKUP = """
import json, sys
from tinykv import Store, StoreOptions
keys = json.load(open(sys.argv[2]))
with Store(sys.argv[1], StoreOptions(memtable_limit=int(sys.argv[3]))) as store:
    print(json.dumps({"get": {k: store.get(k) for k in keys}, "scan": store.scan()}))
"""


def kv(directory, *args, limit=1000, timeout=60):
    return run("python3", "-m", "tinykv", str(directory), "--memtable-limit", str(limit), *args, cwd=APP,
               timeout=timeout)


def load(directory, lines, limit=1000):
    batch = Path(tempfile.mkdtemp()) / "batch.txt"
    batch.write_text("".join(line + "\n" for line in lines))
    proc = kv(directory, "load", str(batch), limit=limit)
    assert proc.returncode == 0, proc.stderr
    return proc


def record_size(key, value):
    return 8 + 1 + 8 + 2 + len(key.encode()) + (len(value.encode()) if value is not None else 0)


def fresh_dir():
    return Path(tempfile.mkdtemp(prefix="kv-"))


def scan(directory, limit=1000):
    proc = kv(directory, "scan", limit=limit)
    assert proc.returncode == 0, proc.stderr
    return [tuple(line.split("\t", 1)) for line in proc.stdout.splitlines()]


def lookup_all(directory, keys, limit=1000):
    keys_file = Path(tempfile.mkdtemp()) / "keys.json"
    keys_file.write_text(json.dumps(sorted(keys)))
    proc = run("python3", "-c", PY_LOOKUP, str(directory), str(keys_file), str(limit), cwd=APP, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    return data["get"], [tuple(item) for item in data["scan"]]


def _puts(prefix, count, seed):
    rng = random.Random(seed)
    return [(f"{prefix}{i:04d}", "".join(rng.choice("abcdefghij klm") for _ in range(rng.randint(1, 30))))
            for i in range(count)]


def test_torn_payload_is_discarded():
    d = fresh_dir()
    items = _puts("user:", 40, 11)
    load(d, [f"put {k} {v}" for k, v in items])
    wal = d / "wal.log"
    size = wal.stat().st_size
    assert size == sum(record_size(k, v) for k, v in items)
    last = record_size(*items[-1])
    with open(wal, "r+b") as handle:
        handle.truncate(size - last + 8 + 5)  # header whole, payload cut short
    proc = kv(d, "get", items[-1][0])
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    proc = kv(d, "get", items[-2][0])
    assert proc.returncode == 0 and proc.stdout == items[-2][1] + "\n", proc.stderr
    assert scan(d) == sorted(items[:-1])
    assert kv(d, "check").returncode == 0


def test_writes_after_recovering_a_torn_header_survive():
    d = fresh_dir()
    items = _puts("acct/", 25, 12)
    load(d, [f"put {k} {v}" for k, v in items])
    with open(d / "wal.log", "ab") as handle:
        handle.write(b"\x8a\x01\x00")  # a record header cut after 3 of its 8 bytes
    first = kv(d, "put", "after/1", "written after the crash")
    assert first.returncode == 0, first.stderr
    assert kv(d, "delete", items[0][0]).returncode == 0
    assert kv(d, "put", "after/2", "second").returncode == 0
    proc = kv(d, "get", "after/1")
    assert proc.returncode == 0 and proc.stdout == "written after the crash\n", proc.stderr
    expected = sorted(items[1:] + [("after/1", "written after the crash"), ("after/2", "second")])
    assert scan(d) == expected
    flush = kv(d, "flush")
    assert flush.returncode == 0, flush.stderr
    assert scan(d) == expected
    assert kv(d, "get", items[0][0]).returncode == 1


def test_checksum_failure_at_the_tail_versus_the_middle():
    d = fresh_dir()
    items = _puts("node-", 30, 13)
    load(d, [f"put {k} {v}" for k, v in items])
    wal = d / "wal.log"
    data = bytearray(wal.read_bytes())
    data[-1] ^= 0x20  # the last record's value no longer matches its checksum: a torn write
    wal.write_bytes(bytes(data))
    proc = kv(d, "get", items[-1][0])
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert scan(d) == sorted(items[:-1])
    assert kv(d, "put", "later", "x").returncode == 0
    assert dict(scan(d)).get("later") == "x"

    d2 = fresh_dir()
    load(d2, [f"put {k} {v}" for k, v in items])
    offset = sum(record_size(k, v) for k, v in items[:9])
    data = bytearray((d2 / "wal.log").read_bytes())
    data[offset + 8 + 12] ^= 0x01  # inside the key of record 10 of 30
    (d2 / "wal.log").write_bytes(bytes(data))
    proc = kv(d2, "get", items[0][0])
    assert proc.returncode == 3, (proc.returncode, proc.stdout, proc.stderr)
    assert "wal.log" in proc.stderr and str(offset) in proc.stderr, proc.stderr


def _three_segments(d):
    load(d, [f"put a{i:03d} first-{i}" for i in range(100)] + ["flush"]
         + [f"del a{i:03d}" for i in range(0, 60, 2)] + ["flush"]
         + [f"put b{i:03d} second-{i}" for i in range(20)] + ["flush"])
    live = {f"a{i:03d}": f"first-{i}" for i in range(100) if not (i < 60 and i % 2 == 0)}
    live.update({f"b{i:03d}": f"second-{i}" for i in range(20)})
    return live


def test_partial_compaction_keeps_deleted_keys_deleted():
    d = fresh_dir()
    live = _three_segments(d)
    proc = kv(d, "compact", "--newest", "2")
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(kv(d, "stats").stdout)
    assert len(stats["segments"]) == 2
    assert [s["tombstones"] for s in stats["segments"]] == [0, 30]
    for key in ("a000", "a010", "a058"):
        assert kv(d, "get", key).returncode == 1, key
    assert kv(d, "get", "a001").stdout == "first-1\n"
    assert scan(d) == sorted(live.items())
    proc = kv(d, "compact", "--newest", "2")  # now including the oldest segment
    assert proc.returncode == 0, proc.stderr
    assert kv(d, "get", "a020").returncode == 1
    assert scan(d) == sorted(live.items())


def test_full_compaction_drops_tombstones_and_keeps_every_key():
    d = fresh_dir()
    live = _three_segments(d)
    assert kv(d, "compact").returncode == 0
    stats = json.loads(kv(d, "stats").stdout)
    assert [(s["entries"], s["tombstones"]) for s in stats["segments"]] == [(len(live), 0)]
    got, scanned = lookup_all(d, list(live) + [f"a{i:03d}" for i in range(0, 60, 2)] + ["zzz"])
    assert {k: v for k, v in got.items() if v is not None} == live
    assert scanned == sorted(live.items())


def test_every_key_of_a_large_segment_is_found():
    d = fresh_dir()
    rng = random.Random(14)
    keys = sorted({"".join(rng.choice("qwertyuiop") for _ in range(6)) for _ in range(300)})
    items = {k: f"value of {k}" for k in keys}
    load(d, [f"put {k} {v}" for k, v in items.items()] + ["flush"])
    got, _ = lookup_all(d, keys)
    missing = [k for k in keys if got[k] != items[k]]
    assert not missing, f"{len(missing)} of {len(keys)} keys not found, e.g. {missing[:5]}"
    for key in (keys[0], keys[-1], keys[len(keys) // 2]):
        proc = kv(d, "get", key)
        assert proc.returncode == 0 and proc.stdout == items[key] + "\n"


def test_random_workload_matches_a_model():
    rng = random.Random(15)
    d = fresh_dir()
    model = {}
    universe = [f"k{n:05d}" for n in range(900)]
    for round_number in range(6):
        lines = []
        for _ in range(700):
            key = rng.choice(universe)
            if rng.random() < 0.3:
                lines.append(f"del {key}")
                model.pop(key, None)
            else:
                value = f"r{round_number}-{rng.randint(0, 10**6)}"
                lines.append(f"put {key} {value}")
                model[key] = value
            if rng.random() < 0.004:
                lines.append("flush")
            if rng.random() < 0.002:
                lines.append("compact 2")
        load(d, lines, limit=150)
    got, scanned = lookup_all(d, universe, limit=150)
    wrong = [k for k in universe if got[k] != model.get(k)]
    assert not wrong, f"{len(wrong)} keys wrong, e.g. {[(k, got[k], model.get(k)) for k in wrong[:4]]}"
    assert scanned == sorted(model.items())
    assert kv(d, "compact", limit=150).returncode == 0
    got, scanned = lookup_all(d, universe, limit=150)
    assert all(got[k] == model.get(k) for k in universe)
    assert scanned == sorted(model.items())


def test_guard_shipped_files_unchanged():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/unit_tests/") or path.endswith(".md"):
            assert unchanged(path), path


def test_guard_unit_tests_pass():
    proc = run("python3", "-m", "unittest", "discover", "-s", "unit_tests", "-t", ".", cwd=APP, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Ran 19 tests" in proc.stderr


def test_guard_still_the_log_structured_store():
    d = fresh_dir()
    load(d, [f"put g{i:03d} v{i}" for i in range(40)] + ["flush", "put g999 last"])
    manifest = json.loads((d / "MANIFEST").read_text())
    assert len(manifest["segments"]) == 1
    segment = (d / manifest["segments"][0]).read_bytes()
    assert segment.startswith(b"TKVSEG1\n") and segment.endswith(b"TKVF")
    entries = struct.unpack(">Q", segment[-24:-16])[0]
    assert entries == 40
    wal = (d / "wal.log").read_bytes()
    payload = wal[8:]
    assert struct.unpack(">I", wal[:4])[0] == zlib.crc32(payload) and payload[0] == 1
    for module in ("wal", "memtable", "segment", "manifest", "compaction", "store", "cli"):
        assert Path(APP, "tinykv", module + ".py").is_file(), module
    cli = Path(APP, "tinykv/cli.py").read_text()
    assert "from .store import Store" in cli
