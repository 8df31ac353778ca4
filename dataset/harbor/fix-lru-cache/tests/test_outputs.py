import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/lru.py': '83cf119724671c5d184691daa84956cc5ee9a5c32f0c12ebe8a62964330df3e6'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import sys

sys.path.insert(0, "/app")
from lru import LRUCache  # noqa: E402


def test_workload_matches_a_reference():
    import random
    from collections import OrderedDict

    rng = random.Random(7)
    for capacity in (1, 3, 5):
        cache, model = LRUCache(capacity), OrderedDict()
        for step in range(3000):
            key = rng.randrange(9)
            if rng.random() < 0.5:
                expected = model.get(key, -1)
                if key in model:
                    model.move_to_end(key)
                assert cache.get(key, -1) == expected, (capacity, step, key)
            else:
                model[key] = step
                model.move_to_end(key)
                if len(model) > capacity:
                    model.popitem(last=False)
                cache.put(key, step)


def test_get_counts_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3


def test_put_of_existing_key_counts_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert cache.get("a") == 10 and cache.get("b") is None and cache.get("c") == 3
