"""Fuzzed bad input, everywhere a user gives it: task sources, replies files, presets, judge control files.

:data:`CASES` cases (:data:`SEED`; case ``i`` draws from ``random.Random(f"{SEED}:{i}")``, so one case replays
alone), split over the kinds of :data:`KINDS`. Each case starts from a valid input, breaks it - bytes flipped,
cut, NUL bytes, invalid UTF-8, nesting deep enough to recurse, wrong types for known keys, unknown keys, huge
values, file names that are not UTF-8, names and symlinks that leave the task folder, FIFOs - and checks:

* the loader returns, or raises only :class:`TaskFormatError` / :class:`ConfigError`, whose message names the
  file (and, for a row or folder, the field); nothing else escapes (no ``RecursionError``, ``UnicodeError`` ...);
* the rows or task folders that were not touched still load (a CSV row, a parquet row, a sibling folder);
* nothing outside a task folder is read into a task (a planted secret never shows up);
* the CLI, called in-process through :func:`terminal_agent.cli.main` (and the launcher's ``main``), exits 2 with
  one ``error:`` message naming the file and no traceback whenever the loader refused the input;
* nothing is written anywhere but the command's output folder (the whole temp tree is snapshotted around it).

A few real subprocess runs at the end check the same contract from a shell. No Docker is needed: every CLI run
here is refused before a sandbox starts (a case whose input still loads is not handed to ``eval run``).
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from task_builders import DATA, REPO, full_task, plain_task, rich_task

from terminal_agent.errors import ConfigError, TaskFormatError
from terminal_agent.models.scripted import load_replies_file
from terminal_agent.rewards.judge_control import JudgeSetting, read_control
from terminal_agent.tasks.csv.format import write_tasks_csv
from terminal_agent.tasks.harbor.format import write_harbor_task
from terminal_agent.tasks.inspection import inspect_tasks
from terminal_agent.tasks.loading import collect_tasks
from terminal_agent.tasks.parquet.rows import task_to_flat_dict
from terminal_agent.tasks.terminal_bench.format import write_tb_task
from terminal_agent.training.preset_config import load_preset

SEED = 20261202
#: Cases per kind; :data:`CASES` in all.
KINDS = {"csv": 70, "harbor": 60, "tb": 40, "parquet": 40, "replies": 40, "preset": 30, "judge": 40}
CASES = sum(KINDS.values())  # 320
SECRET = "TOP-SECRET-never-inside-a-task"
LOCAL_PRESET = REPO / "src" / "terminal_agent" / "training" / "presets" / "local_cpu_smoke.yaml"
HARBOR_FIXTURES = [DATA / "harbor_tasks" / "csv-report-1.0", DATA / "harbor_tasks" / "separate-verifier-1.1"]
GOOD_REPLIES = json.dumps(["<finish>\nmessage: done\n</finish>"])


def _case_list() -> list[tuple[int, str]]:
    cases, index = [], 0
    for kind, count in KINDS.items():
        for _ in range(count):
            cases.append((index, kind))
            index += 1
    return cases


# --- mutations -----------------------------------------------------------------------------------------------
JUNK = [b"\x00", b"\xff\xfe", b"\xc3(", b"\xed\xa0\x80", b'"', b"'''", b"=", b"\n[x]\n", b"\n[[steps]]\n", b"{", b"}",
        b"\\", b"\r", b"\xe2\x80\xa8", b"1e999", b"nan", b"-", b"..", b"/", b"*", b"&a [*a]", b"!!python/object:os.system"]
#: Values put where a known key's value was (TOML, YAML and JSON spellings mixed on purpose).
LITERALS = ['"text"', "-1", "0", "1e999", "inf", "nan", "-inf", "[]", "{}", "[[1]]", "true", "null", "~",
            "1979-05-27T07:32:00Z", '"\\u0000"', '"' + "x" * 100_000 + '"', "[" * 1200, "{" * 1200, '"../../../etc"',
            "&a [*a]", "*undefined", "!!binary aGVsbG8=", '"\\ud800"', "0x7fffffffffffffffffff", "- a\n- b",
            '{"a": 1}', "[1, 2, 3]", '"' + "\\" + '"']


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """1 to 4 random edits: a byte flipped, junk inserted, a span cut, the tail cut, deep brackets, a span repeated."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op, pos = rng.randrange(6), rng.randrange(len(out) + 1)
        if op == 0 and out:
            out[pos % len(out)] = rng.randrange(256)
        elif op == 1:
            out[pos:pos] = rng.choice(JUNK)
        elif op == 2:
            del out[pos:pos + rng.randint(1, 40)]
        elif op == 3:
            del out[pos:]
        elif op == 4:
            out[pos:pos] = bytes([rng.choice(b"[{")]) * rng.choice([10, 1200, 3000])
        else:
            start = rng.randrange(len(out) + 1)
            out[pos:pos] = out[start:start + rng.randint(1, 60)]
    return bytes(out)


def replace_a_value(rng: random.Random, text: str, separator: str) -> str:
    """``text`` with the value of one ``key<separator>value`` line replaced by a random literal."""
    lines = text.splitlines()
    candidates = [i for i, line in enumerate(lines) if separator in line and not line.lstrip().startswith("#")]
    if not candidates:
        return text + "\n" + rng.choice(LITERALS)
    index = rng.choice(candidates)
    key = lines[index].split(separator, 1)[0]
    lines[index] = f"{key}{separator}{rng.choice(LITERALS)}"
    return "\n".join(lines) + "\n"


def random_json_value(rng: random.Random) -> object:
    return rng.choice([None, True, -1, 0, 1e300, float("nan"), "x", "", "\x00", [], {}, [1, "a"], {"a": [None]},
                       {"../../escape.txt": "x"}, {"/etc/passwd": "x"}, "../evil", {"a/../../b": "x"}, {"f": {"base64": "!!"}},
                       "[" * 1200, "x" * 200_000, "\ud800", {"a\udcff": "x"}, {"cpus": -1}, {"memory_mb": "lots"}, {"test_a": "heavy"}])


# --- what every case checks --------------------------------------------------------------------------------------
def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root`` (links not followed): type, size, mtime and link target."""
    entries = {}
    for current, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(current) / name
            info = path.lstat()
            target = os.readlink(path) if path.is_symlink() else None
            entries[str(path.relative_to(root))] = (info.st_mode, info.st_size if not path.is_dir() else 0,
                                                    info.st_mtime_ns, target)
    return entries


def changed_outside(before: dict[str, tuple], after: dict[str, tuple], outputs: list[str]) -> list[str]:
    """Entries added, removed or changed outside the ``outputs`` folders (relative to the snapshot root)."""
    def inside(name: str) -> bool:
        return any(name == out or name.startswith(out + os.sep) for out in outputs)

    return sorted(name for name in set(before) | set(after)
                  if not inside(name) and before.get(name) != after.get(name))


def run_main(argv: list[str], capsys) -> tuple[int, str]:  # noqa: ANN001 - pytest's capsys
    """``terminal-agent ARGV`` in this process, through the console entry point; (exit code, stderr)."""
    from terminal_agent.cli import main

    capsys.readouterr()
    saved = sys.argv
    sys.argv = ["terminal-agent", *argv]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = saved
    return code, capsys.readouterr().err


def assert_refused_by_cli(code: int, err: str, names: str) -> None:
    assert code == 2, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    flat = " ".join(err.split())  # rich wraps long lines
    assert "error" in flat and names in flat, err[-2000:]


def assert_task_error_named(error: TaskFormatError, where: str, *, row_level: bool) -> None:
    assert isinstance(error, TaskFormatError), repr(error)
    assert where in str(error), str(error)
    if row_level:
        assert error.field, str(error)


def assert_no_secret(tasks) -> None:  # noqa: ANN001
    for task in tasks:
        for mapping in (task.files, task.test_support_files, task.solution_files):
            for content in mapping.values():
                text = content if isinstance(content, str) else content.decode("latin-1")
                assert SECRET not in text
        assert SECRET not in task.instruction + task.dockerfile + task.test_source + (task.solution or "")


# --- task sources ------------------------------------------------------------------------------------------------
SOURCE_TASKS = [plain_task("first-row"), rich_task(task_id="target-row"), full_task(task_id="last-row")]
CSV_COLUMNS = ["task_id", "prompt", "dockerfile", "test_functions", "test_weights", "additional_files", "limits",
               "metadata", "tags", "env", "verifier", "guards", "solution_files", "difficulty"]


def make_csv(rng: random.Random, case_dir: Path) -> tuple[Path, bool]:
    """A CSV of three tasks with its middle row (or, for byte edits, anything) broken; (path, row-level?)."""
    path = write_tasks_csv(SOURCE_TASKS, case_dir / "t.csv")
    if rng.random() < 0.35:
        path.write_bytes(mutate_bytes(rng, path.read_bytes()))
        return path, False
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    header, target = rows[0], rows[2]
    for column in rng.sample(CSV_COLUMNS, rng.randint(1, 2)):
        if column not in header:
            header.append(column)
            for row in rows[1:]:
                row.append("")
        index = header.index(column)
        choice = rng.random()
        if choice < 0.5:
            value = random_json_value(rng)
            plain = isinstance(value, str) and value.isascii()  # else its JSON (a lone surrogate as a \ud800 escape)
            target[index] = value if plain else json.dumps(value)
        elif choice < 0.7:
            target[index] = rng.choice(["../evil", "a/b", "", "x" * 200, ".", "..", "\x00id", "ok id"])
        else:
            target[index] = target[index][: rng.randrange(len(target[index]) + 1)] + rng.choice(["\x00", "\ufffe", ""])
    if rng.random() < 0.2:
        target.append("an extra cell")
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    data = buffer.getvalue().encode("utf-8")
    if rng.random() < 0.25:  # a byte that is not UTF-8 inside the target row only
        start = data.find(b"\ntarget-row") + 1
        if start:
            data = data[:start + 5] + b"\xff" + data[start + 5:]
    path.write_bytes(data)
    return path, True


def make_parquet(rng: random.Random, case_dir: Path) -> tuple[Path, bool]:
    """Three rows (``extra_info`` as JSON strings, each row on its own) with the middle one broken."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    flats = [task_to_flat_dict(task) for task in SOURCE_TASKS]
    target: object = dict(flats[1])
    choice = rng.random()
    if choice < 0.6:
        for key in rng.sample(sorted(target), rng.randint(1, 3)):
            target[key] = random_json_value(rng)
        text = json.dumps(target, allow_nan=True)
    elif choice < 0.8:
        text = rng.choice(["[1, 2]", "null", '"a string"', "{" * 1200, "not json", json.dumps(flats[1])[:-3]])
    else:
        text = json.dumps(target)
    strings = [json.dumps(flats[0]), text, json.dumps(flats[2])]
    path = case_dir / "t.parquet"
    pq.write_table(pa.table({"extra_info": strings}), path)
    if choice >= 0.8:  # the file itself broken: cut or flipped bytes (a whole-file error, or row errors)
        path.write_bytes(mutate_bytes(rng, path.read_bytes()))
        return path, False
    return path, True


def _plant(rng: random.Random, task_dir: Path, secret: Path) -> None:
    """One file-system trick inside ``task_dir``: links out, a FIFO, odd names, a sparse huge file, a directory
    where a file belongs."""
    files = sorted(p for p in task_dir.rglob("*") if p.is_file())
    victim = rng.choice(files)
    trick = rng.randrange(8)
    if trick == 0:
        victim.unlink()
        victim.symlink_to(secret)
    elif trick == 1:
        victim.unlink()
        victim.symlink_to(os.path.relpath(secret, victim.parent))
    elif trick == 2:
        victim.unlink()
        os.mkfifo(victim)
    elif trick == 3:
        (victim.parent / os.fsdecode(b"\xff\xfe-not-utf8.bin")).write_bytes(b"\x00\x01")
    elif trick == 4:
        (victim.parent / "line\nbreak\tname.txt").write_text("x")
    elif trick == 5:
        with open(victim, "r+b") as handle:  # sparse: 65 MiB on paper, nothing on disk
            handle.truncate(65 * 1024 * 1024)
    elif trick == 6:
        victim.unlink()
        victim.mkdir()
    else:
        (victim.parent / "outside").symlink_to(secret.parent, target_is_directory=True)


def make_task_dir(rng: random.Random, case_dir: Path, kind: str, secret: Path) -> tuple[Path, Path]:
    """A collection of a good sibling and one broken task folder; (collection, broken folder)."""
    collection = case_dir / "tasks"
    writer = write_harbor_task if kind == "harbor" else write_tb_task
    writer(plain_task("good-sibling"), collection)
    if kind == "harbor" and rng.random() < 0.4:
        import shutil

        source = rng.choice(HARBOR_FIXTURES)
        broken = collection / source.name
        shutil.copytree(source, broken)
    else:
        broken = writer(rng.choice([plain_task("broken"), rich_task(task_id="broken"), full_task(task_id="broken")]),
                        collection)
    marker = broken / ("task.toml" if kind == "harbor" else "task.yaml")
    choice = rng.random()
    if choice < 0.4:
        marker.write_text(replace_a_value(rng, marker.read_text(), " = " if kind == "harbor" else ": "))
    elif choice < 0.7:
        victim = rng.choice(sorted(p for p in broken.rglob("*") if p.is_file()))
        victim.write_bytes(mutate_bytes(rng, victim.read_bytes()))
    else:
        _plant(rng, broken, secret)
    return collection, broken


def check_task_source(rng: random.Random, index: int, kind: str, case_dir: Path, capsys) -> None:  # noqa: ANN001
    """One broken task source through the loaders, ``tasks inspect``, (even cases) ``eval run`` and (every 4th) ``tasks convert``."""
    secret = case_dir / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    if kind == "csv":
        source, row_level = make_csv(rng, case_dir)
        where, untouched = "t.csv", {"first-row", "last-row"}
    elif kind == "parquet":
        source, row_level = make_parquet(rng, case_dir)
        where, untouched = "t.parquet", {"first-row", "last-row"}
    else:
        source, broken = make_task_dir(rng, case_dir, kind, secret)
        row_level, where, untouched = True, str(broken), {"good-sibling"}
    before = snapshot(case_dir)

    try:
        tasks, errors = collect_tasks(source, workers=1)
    except TaskFormatError as exc:  # a problem of the whole source: only where the whole file was broken
        assert not row_level, f"a broken row spoiled the whole source: {exc}"
        assert_task_error_named(exc, source.name, row_level=False)
        tasks, errors, whole = [], [exc], True
    else:
        whole = False
        for error in errors:
            assert_task_error_named(error, where, row_level=True)
        if row_level:
            assert untouched <= {task.task_id for task in tasks}, [str(e) for e in errors]
    assert_no_secret(tasks)
    if kind == "harbor":
        report = inspect_tasks(source)  # never raises for a folder's own faults
        assert any(entry.task_id == "good-sibling" and entry.ok for entry in report.tasks)
    assert changed_outside(before, snapshot(case_dir), []) == []

    if errors and index % 2 == 0:  # (even cases) the CLI refuses the source before anything runs: exit 2, nothing written
        replies = case_dir / "replies.json"
        replies.write_text(GOOD_REPLIES)
        before = snapshot(case_dir)
        code, err = run_main(["eval", "run", str(source), "--model", f"scripted:{replies}", "-o",
                              str(case_dir / "eval-out"), "--no-plot"], capsys)
        assert_refused_by_cli(code, err, where if row_level and not whole else source.name)
        assert changed_outside(before, snapshot(case_dir), ["eval-out"]) == []
        assert not (case_dir / "eval-out").exists()
    if index % 4:
        return
    # a conversion writes only its output: nothing for a broken source (exit 2), the good tasks for bad rows (1)
    before = snapshot(case_dir)
    code, err = run_main(["tasks", "convert", str(source), str(case_dir / "converted.csv"), "--to", "csv"], capsys)
    assert "Traceback" not in err
    assert changed_outside(before, snapshot(case_dir), ["converted.csv"]) == []
    if whole:
        assert_refused_by_cli(code, err, source.name)
        assert not (case_dir / "converted.csv").exists()
    else:
        # exit 1 for bad rows (reported, the good ones written); a task CSV cannot hold is one more bad row
        assert code in (0, 1) and (code == 1 or not errors), err[-2000:]
        if not tasks:  # nothing good to write: nothing written
            assert code == 1 and not (case_dir / "converted.csv").exists()
            return
        converted, _ = collect_tasks(case_dir / "converted.csv", workers=1)
        assert {t.task_id for t in converted} <= {t.task_id for t in tasks}
        assert code == 1 or len(converted) == len(tasks)


# --- replies files, presets, judge control files ---------------------------------------------------------------
def check_replies(rng: random.Random, case_dir: Path, capsys) -> None:  # noqa: ANN001
    suffix = rng.choice([".json", ".yaml", ".yml", ".txt", ""])
    path = case_dir / f"replies{suffix}"
    base = GOOD_REPLIES if suffix in (".json", ".txt", "") else "- \"<finish>\\nmessage: done\\n</finish>\"\n"
    choice = rng.random()
    if choice < 0.6:
        path.write_bytes(mutate_bytes(rng, base.encode()))
    elif choice < 0.9:
        value = random_json_value(rng)
        path.write_text(json.dumps([value] if rng.random() < 0.5 else value))
    elif choice < 0.95:
        os.mkfifo(path)
    else:
        path.mkdir()
    tasks = write_tasks_csv([plain_task()], case_dir / "tasks.csv")
    before = snapshot(case_dir)
    try:
        replies = load_replies_file(path)
    except ConfigError as exc:
        assert str(path) in str(exc)
    else:
        assert isinstance(replies, list) and all(isinstance(reply, str) for reply in replies)
        return  # a good script would run episodes (Docker): not for this test
    code, err = run_main(["eval", "run", str(tasks), "--model", f"scripted:{path}", "-o", str(case_dir / "out")], capsys)
    assert_refused_by_cli(code, err, str(path))
    assert changed_outside(before, snapshot(case_dir), ["out"]) == []


def check_preset(rng: random.Random, case_dir: Path, capsys) -> None:  # noqa: ANN001
    import launch_training

    path = case_dir / rng.choice(["preset.yaml", "preset.yml"])
    text = LOCAL_PRESET.read_text()
    choice = rng.random()
    if choice < 0.45:
        path.write_text(replace_a_value(rng, text, ": "))
    elif choice < 0.75:
        path.write_bytes(mutate_bytes(rng, text.encode()))
    elif choice < 0.9:
        section = rng.choice(["", "rollout:\n  ", "local:\n  ", "local:\n  lora:\n    ", "trainer:\n  "])
        path.write_text(text + f"\n{section}not_a_key: {rng.choice(LITERALS[:12])}\n")
    else:
        path.write_bytes(text.encode() + rng.choice([b"\nname: \xff\xfe\n", b"\n" + b"x: [" * 1200 + b"\n"]))
    before = snapshot(case_dir)
    try:
        load_preset(path)
    except ConfigError as exc:
        assert str(path) in str(exc), str(exc)
    else:
        return  # the preset still reads; launching it is another test's business
    code = launch_training.main([str(path), "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "error" in err, err[-2000:]
    assert changed_outside(before, snapshot(case_dir), []) == []


def check_judge_control(rng: random.Random, case_dir: Path, capsys) -> None:  # noqa: ANN001
    path = case_dir / "judge.json"
    good = JudgeSetting(backend="litellm", model="openai/x", weight=0.3, written_at="now", written_by="host:1")
    choice = rng.random()
    if choice < 0.55:
        path.write_bytes(mutate_bytes(rng, good.model_dump_json().encode()))
    elif choice < 0.9:
        data = good.model_dump()
        data[rng.choice(["backend", "model", "weight", "written_at", "written_by", "extra"])] = random_json_value(rng)
        path.write_text(json.dumps(data, allow_nan=True))
    elif choice < 0.95:
        os.mkfifo(path)
    else:
        path.write_bytes(b"{" + b'"a":' * 200_000)
    before = snapshot(case_dir)
    try:
        read_control(path)
        expected = 0
    except ConfigError as exc:
        assert str(path) in str(exc)
        expected = 2
    code, err = run_main(["judge", "show", "--control-file", str(path)], capsys)
    if expected == 2:
        assert_refused_by_cli(code, err, str(path))
    else:
        assert code == 0, err
    assert changed_outside(before, snapshot(case_dir), []) == []


@pytest.fixture(autouse=True)
def _launcher_on_path(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(REPO / "training_scripts"))
    work = tmp_path / "cwd"  # anything a command writes relative to its directory lands in the snapshot
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("COLUMNS", "400")  # rich: one message, one line


@pytest.mark.parametrize("index, kind", _case_list(), ids=[f"{kind}-{index}" for index, kind in _case_list()])
def test_fuzzed_bad_input(index, kind, tmp_path, capsys):
    rng = random.Random(f"{SEED}:{index}")
    case_dir = tmp_path
    if kind in ("csv", "parquet", "harbor", "tb"):
        check_task_source(rng, index, kind, case_dir, capsys)
    elif kind == "replies":
        check_replies(rng, case_dir, capsys)
    elif kind == "preset":
        check_preset(rng, case_dir, capsys)
    else:
        check_judge_control(rng, case_dir, capsys)


# --- a few real command lines ------------------------------------------------------------------------------------
def _shell(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "400", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


def test_real_command_lines_exit_2_without_a_traceback(tmp_path):
    tasks = write_tasks_csv([plain_task()], tmp_path / "tasks.csv")
    (tmp_path / "not-json.txt").write_text("this is neither JSON nor YAML {")
    (tmp_path / "deep.json").write_text("[" * 100_000)
    broken_csv = tmp_path / "broken.csv"
    rows = list(csv.reader(io.StringIO(tasks.read_text(), newline="")))
    rows[1][rows[0].index("test_weights")] = "[" * 5000
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    broken_csv.write_text(buffer.getvalue())
    preset = tmp_path / "preset.yaml"
    preset.write_bytes(LOCAL_PRESET.read_bytes().replace(b"steps:", b"stepz:"))
    runs = {
        "not-json.txt": ["-m", "terminal_agent", "eval", "run", str(tasks), "--model", f"scripted:{tmp_path / 'not-json.txt'}"],
        "deep.json": ["-m", "terminal_agent", "judge", "show", "--control-file", str(tmp_path / "deep.json")],
        "broken.csv:2": ["-m", "terminal_agent", "eval", "run", str(broken_csv), "--model", "scripted:x.json"],
        "preset.yaml: local.stepz": [str(REPO / "training_scripts" / "launch_training.py"), str(preset), "--dry-run"],
    }
    before = snapshot(tmp_path)
    for names, args in runs.items():
        done = _shell(*args, cwd=tmp_path)
        flat = " ".join(done.stderr.split())
        assert done.returncode == 2, (names, done.stderr[-3000:])
        assert "Traceback" not in done.stderr and names in flat, (names, done.stderr[-3000:])
    assert changed_outside(before, snapshot(tmp_path), []) == []


def test_a_csv_cell_over_its_bound_is_that_rows_error_and_the_other_rows_load(tmp_path):
    from terminal_agent.tasks.cell_bounds import MAX_TEXT_CELL_CHARS

    path = write_tasks_csv(SOURCE_TASKS, tmp_path / "t.csv")
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    rows[2][rows[0].index("prompt")] = "x" * (MAX_TEXT_CELL_CHARS + 1)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())
    tasks, errors = collect_tasks(path, workers=1)
    assert sorted(task.task_id for task in tasks) == ["first-row", "last-row"]
    (error,) = errors
    assert error.field == "prompt" and "t.csv:" in str(error) and "more than" in str(error)


def test_images_export_refuses_bad_tasks_and_a_bad_splits_file_with_exit_2(tmp_path, capsys):
    broken = tmp_path / "broken.csv"
    broken.write_text("task_id,prompt\nx,y\n")  # no dockerfile / test columns
    good = write_tasks_csv([plain_task()], tmp_path / "tasks.csv")
    splits = tmp_path / "splits.json"
    splits.write_text("[" * 10)
    before = snapshot(tmp_path)
    code, err = run_main(["images", "export", str(broken), "-o", str(tmp_path / "export")], capsys)
    assert_refused_by_cli(code, err, "broken.csv:1")
    code, err = run_main(["images", "export", str(good), "-o", str(tmp_path / "export"), "--splits", str(splits)],
                         capsys)
    assert_refused_by_cli(code, err, "splits.json")
    assert changed_outside(before, snapshot(tmp_path), []) == []


def test_a_splits_file_and_judge_cases_nested_too_deeply_exit_2(tmp_path, capsys):
    import launch_training

    splits = tmp_path / "splits.json"
    splits.write_text("[" * 100_000)
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "deep.yaml").write_text("id: " + "[" * 3000)
    before = snapshot(tmp_path)
    tasks = REPO / "dataset" / "smoke" / "count_matches_train.csv"
    code = launch_training.main(["local_cpu_smoke", f"data.tasks={tasks}", f"data.splits={splits}",
                                 f"trainer.output_dir={tmp_path / 'runs'}", "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2 and "data.splits" in err and "splits.json" in err and "Traceback" not in err, err
    code, err = run_main(["judge", "eval", "--cases", str(cases), "-o", str(tmp_path / "judge-out")], capsys)
    assert_refused_by_cli(code, err, "deep.yaml")
    assert changed_outside(before, snapshot(tmp_path), []) == []
