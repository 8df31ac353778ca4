
import random
import re
import shutil

FIXTURES = Path(__file__).parent / "patchkit_fixtures"
PROJECT = "/app/patchkit"
HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def pk(*args, cwd=None, input=None):
    env = dict(os.environ, PYTHONPATH=PROJECT)
    return subprocess.run(["python3", "-m", "patchkit", *args], capture_output=True, text=True, input=input,
                          cwd=cwd, env=env, timeout=120)


BATCH = """
import contextlib, io, json, os, sys
from patchkit.cli import main
results = []
for folder, argv in json.load(sys.stdin):
    os.chdir(folder)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    results.append([code, out.getvalue()])
print(json.dumps(results))
"""


def pk_batch(calls):
    """Many CLI calls (folder, argv) in one interpreter, through the CLI's own main()."""
    env = dict(os.environ, PYTHONPATH=PROJECT)
    result = subprocess.run(["python3", "-c", BATCH], input=json.dumps([[str(f), a] for f, a in calls]),
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def _strict_check(patch, old_lines, new_lines):
    """Every hunk's header names exactly the lines its body shows, by the unified-format rules."""
    hunks = 0
    lines = patch.splitlines()
    n = 2
    while n < len(lines):
        m = HEADER.match(lines[n])
        assert m, f"not a hunk header: {lines[n]!r}"
        hunks += 1
        os_, ol, ns, nl = int(m.group(1)), int(m.group(2) or 1), int(m.group(3)), int(m.group(4) or 1)
        body_old, body_new = [], []
        n += 1
        while n < len(lines) and not lines[n].startswith("@@"):
            kind, text = lines[n][:1], lines[n][1:]
            if kind in " -":
                body_old.append(text)
            if kind in " +":
                body_new.append(text)
            n += 1
        assert (len(body_old), len(body_new)) == (ol, nl), lines
        old_at = os_ - 1 if ol else os_
        new_at = ns - 1 if nl else ns
        assert 0 <= old_at <= len(old_lines) and 0 <= new_at <= len(new_lines), (m.group(0), len(old_lines))
        assert old_lines[old_at:old_at + ol] == body_old, (m.group(0), "old side")
        assert new_lines[new_at:new_at + nl] == body_new, (m.group(0), "new side")
        if ol == 0:
            assert os_ == old_at  # an empty range is named by the line before it
    return hunks


def _pairs(seed, count):
    rng = random.Random(seed)
    vocabulary = ["alpha", "beta", "gamma", "delta", "omega", "}", "", "return x", "x += 1"]
    for _ in range(count):
        old = [rng.choice(vocabulary) for _ in range(rng.randrange(0, 40))]
        new = list(old)
        for _ in range(rng.randrange(1, 6)):
            where = rng.randrange(len(new) + 1)
            action = rng.randrange(3)
            if action == 0 and new:
                del new[min(where, len(new) - 1)]
            elif action == 1:
                new[where:where] = [f"added {rng.randrange(99)}" for _ in range(rng.randrange(1, 4))]
            elif new:
                new[min(where, len(new) - 1)] = f"changed {rng.randrange(99)}"
        yield old, new


def _write(path, lines):
    Path(path).write_text("".join(line + "\n" for line in lines))


def test_diff_hunk_headers(tmp_path):
    cases = list(_pairs(3601, 60))
    cases += [([], ["first", "second", "third"]), (["only", "lines"], []), (["x"] * 5, ["top"] + ["x"] * 5),
              (["a", "b", "c"], ["a", "b", "c", "d", "e"])]
    calls = []
    for number, (old, new) in enumerate(cases):
        _write(tmp_path / f"old{number}", old)
        _write(tmp_path / f"new{number}", new)
        calls += [(tmp_path, ["diff", "-U", context, f"old{number}", f"new{number}"]) for context in ("0", "1", "3")]
    checked = 0
    for (code, output), (_, argv) in zip(pk_batch(calls), calls):
        number = int(argv[-1][3:])
        old, new = cases[number]
        assert code == (0 if old == new else 1), (number, argv)
        if old != new:
            checked += _strict_check(output, old, new)
    assert checked > 150
    # Against an empty file: the same bytes as GNU diff writes.
    _write(tmp_path / "empty", [])
    _write(tmp_path / "three", ["one", "two", "three"])
    result = pk("diff", "--label-old", "/dev/null", "--label-new", "b/three", "empty", "three", cwd=tmp_path)
    assert result.stdout == "--- /dev/null\n+++ b/three\n@@ -0,0 +1,3 @@\n+one\n+two\n+three\n"
    result = pk("diff", "--label-old", "a/three", "--label-new", "/dev/null", "three", "empty", cwd=tmp_path)
    assert result.stdout == "--- a/three\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n"


def _apply_fixture(tmp_path, patch, original, target, *args):
    destination = tmp_path / target
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / original, destination)
    return pk("apply", str(FIXTURES / patch), "-d", str(tmp_path), *args, cwd=tmp_path), destination


def test_apply_gnu_zero_context_patches(tmp_path):
    result, path = _apply_fixture(tmp_path, "u0.patch", "u0_old.txt", "etc/app.cfg")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "u0_new.txt").read_bytes()
    result, path = _apply_fixture(tmp_path, "u0b.patch", "u0b_old.txt", "notes.txt")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "u0b_new.txt").read_bytes()


def test_reverse_and_round_trip(tmp_path):
    result, path = _apply_fixture(tmp_path, "u0b.patch", "u0b_new.txt", "notes.txt", "-R")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "u0b_old.txt").read_bytes()
    result, path = _apply_fixture(tmp_path, "u0.patch", "u0_new.txt", "etc/app.cfg", "-R")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "u0_old.txt").read_bytes()
    pairs = list(_pairs(3602, 25))
    diffs = []
    for number, (old, new) in enumerate(pairs):
        work = tmp_path / f"rt{number}"
        (work / "a").mkdir(parents=True)
        _write(work / "a" / "f.txt", old)
        _write(work / "new.txt", new)
        diffs.append((work, ["diff", "-U", str(number % 4), "--label-old", "a/f.txt", "--label-new", "b/f.txt",
                             "a/f.txt", "new.txt"]))
    for (work, _), (_, text) in zip(diffs, pk_batch(diffs)):
        (work / "p.diff").write_text(text)
    applied = pk_batch([(work, ["apply", "p.diff", "-d", "a"]) for work, _ in diffs])
    for number, ((work, _), (code, output)) in enumerate(zip(diffs, applied)):
        assert code == 0, (number, output)
        assert (work / "a" / "f.txt").read_text() == (work / "new.txt").read_text(), number
    back = pk_batch([(work, ["apply", "-R", "p.diff", "-d", "a"]) for work, _ in diffs])
    for number, ((work, _), (code, output)) in enumerate(zip(diffs, back)):
        assert code == 0 and (work / "a" / "f.txt").read_text() == "".join(l + "\n" for l in pairs[number][0])


def test_apply_takes_the_nearest_match(tmp_path):
    result, path = _apply_fixture(tmp_path, "off.patch", "off_target.txt", "service.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "off_expected.txt").read_bytes()
    assert "Hunk #1 succeeded at 8 (offset -2 lines)." in result.stdout
    assert "Hunk #2 succeeded at 38 (offset -2 lines)." in result.stdout


def test_apply_carries_offsets_and_fuzz(tmp_path):
    result, path = _apply_fixture(tmp_path, "dr.patch", "dr_target.txt", "jobs.ini")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "dr_expected.txt").read_bytes()
    assert "Hunk #2 succeeded at 43 (offset 6 lines)." in result.stdout
    result, path = _apply_fixture(tmp_path, "fz.patch", "fz_target.txt", "opts.conf")
    assert result.returncode == 1
    assert "Hunk #2 FAILED" in result.stdout
    rejects = (tmp_path / "opts.conf.rej").read_text()
    assert "+option_31b = new" in rejects and "option_6" not in rejects
    assert "option_6 = changed" in path.read_text() and "option_31b" not in path.read_text()
    (tmp_path / "opts.conf.rej").unlink()
    result, path = _apply_fixture(tmp_path, "fz.patch", "fz_target.txt", "opts.conf", "--fuzz", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Hunk #2 succeeded at 29 with fuzz 2 (offset 1 line)." in result.stdout
    assert path.read_bytes() == (FIXTURES / "fz_expected.txt").read_bytes()


def _merge(tmp_path, base, mine, theirs, *extra):
    for name, lines in (("base", base), ("mine", mine), ("theirs", theirs)):
        _write(tmp_path / name, lines)
    return pk("merge", "mine", "base", "theirs", "-L", "ours", "-L", "common", "-L", "other", *extra, cwd=tmp_path)


def test_merge_same_change_on_both_sides_is_clean(tmp_path):
    base = [f"setting_{n} = {n}" for n in range(1, 16)]
    mine = list(base)
    theirs = list(base)
    for side in (mine, theirs):
        side[4] = "setting_5 = 500"  # the same fix made twice
        side[9:9] = ["# new block", "setting_9b = 9"]
    mine[0] = "setting_1 = one"
    theirs[-1] = "setting_15 = fifteen"
    result = _merge(tmp_path, base, mine, theirs)
    expected = list(mine)
    expected[-1] = "setting_15 = fifteen"
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "".join(line + "\n" for line in expected)


def test_merge_touching_changes_conflict(tmp_path):
    base = ["a", "b", "c", "d", "e", "f", "g"]
    result = _merge(tmp_path, base, base[:3] + ["from mine"] + base[3:], base[:3] + ["from theirs"] + base[3:])
    assert result.returncode == 1
    assert result.stdout == "a\nb\nc\n<<<<<<< ours\nfrom mine\n=======\nfrom theirs\n>>>>>>> other\nd\ne\nf\ng\n"
    mine = ["a", "B", "c", "d", "e", "f", "g"]
    theirs = ["a", "b", "C", "d", "e", "f", "g"]
    result = _merge(tmp_path, base, mine, theirs, "--diff3")
    assert result.returncode == 1
    assert result.stdout == ("a\n<<<<<<< ours\nB\nc\n||||||| common\nb\nc\n=======\nb\nC\n>>>>>>> other\n"
                             "d\ne\nf\ng\n")
    # Changes two lines apart still merge cleanly.
    result = _merge(tmp_path, base, ["a", "B", "c", "d", "e", "f", "g"], ["a", "b", "c", "D", "e", "f", "g"])
    assert result.returncode == 0 and result.stdout == "a\nB\nc\nD\ne\nf\ng\n"


def test_guard_suite_and_fixtures_unchanged():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/patchkit/tests/"):
            assert unchanged(path), path


def test_guard_shipped_suite_passes():
    result = run("python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".", cwd=PROJECT, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_guard_no_rewrite():
    probe = ("import patchkit.cli as c; print(c.unified_diff.__module__, c.apply_hunks.__module__, "
             "c.merge.__module__, c.parse_patch.__module__)")
    result = subprocess.run(["python3", "-c", probe], capture_output=True, text=True, cwd=PROJECT, timeout=60)
    assert result.stdout.split() == ["patchkit.format", "patchkit.apply", "patchkit.merge3", "patchkit.parse"]
    for name in ("myers", "hunks", "format", "parse", "apply", "merge3", "lines", "cli"):
        source = Path(PROJECT, "patchkit", f"{name}.py").read_text()
        for banned in ("import subprocess", "import difflib", "from difflib", "os.system", "os.popen"):
            assert banned not in source, (name, banned)
