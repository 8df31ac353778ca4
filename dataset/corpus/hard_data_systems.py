"""Terminal-Bench-2-hard tasks on data systems (issue 36): each ships a codebase of 1,000+ lines in which several
modules must change, graded by hidden black-box tests on inputs the agent never sees.

- ``lsm-kv-store-recovery``: tinykv, a log-structured key-value store (write-ahead log, memtable, sorted segments
  with a sparse index, compaction, CLI). A torn final log record makes the store refuse to open (and new writes
  after it would be lost), partial compaction resurrects deleted keys, and lookups miss the last index block of a
  segment: wal.py, compaction.py and segment.py change.
- ``sql-csv-engine-nulls-having``: csvql, SQL over CSV files (tokenizer, parser, planner, executor, value rules,
  aggregates). NULL comparisons and aggregates over NULLs are wrong, NULL join keys match each other, the extra
  conditions of a LEFT JOIN's ON are applied as a filter after the join, and HAVING is missing: values.py,
  functions.py, executor.py, plan.py and planner.py change, and HAVING crosses tokens.py, ast.py, parser.py and
  planner.py. The hidden tests compare every query with SQLite on fresh data.
- ``workflow-runner-resume``: flowrun, a DAG job runner keeping its state in SQLite (spec, DAG, backoff, executor,
  state store, scheduler, CLI). Cycles unreachable from a root pass unnoticed, a job runs one attempt too few
  and waits too long, the state is not committed as it happens (a killed runner loses it) and resume treats
  unfinished jobs as done and reuses attempt numbers: dag.py, backoff.py, scheduler.py and state.py change.
- ``ledger-import-fx-rounding``: ledgerkit, a double-entry ledger on a plain-text journal (Decimal money,
  exchange rates by date, journal reader/writer, bank CSV and QIF importers, converted reports, CLI).
  Accounting parentheses and Debit/Credit columns give wrong signs, QIF two-digit years land in the 1900s,
  rates are taken from the next published day, and converted amounts are rounded to the source currency:
  importers/base.py, importers/bank_csv.py, importers/qif.py, rates.py and money.py change.

The programs live as ordinary files under ``hard_data_systems_files/<task>/``: ``program/`` is the working program,
``planted_bugs.toml`` the edits that plant its bugs (the task ships the planted program to ``/app``, and the planted
files as ``program/`` has them to ``/solution/fixed``, see _planted_bugs.py), ``hidden_tests.py`` the weighted tests
(run after the corpus prelude, never shown to the agent).
"""

from __future__ import annotations

from pathlib import Path

from _planted_bugs import PlantedCodebase
from _spec import Spec
from terminal_agent.tasks.model import NegativeSolution

FILES = Path(__file__).resolve().parent / "hard_data_systems_files"


def _task_files(name: str) -> tuple[dict[str, str], dict[str, str], str]:
    """(shipped files, solution files, hidden test source) of the codebase folder ``name``."""
    codebase = PlantedCodebase(FILES / name)
    return codebase.shipped, codebase.fixed, codebase.tests


# --------------------------------------------------------------------------------------------------------------
# 1. lsm-kv-store-recovery

_KV_APP, _KV_FIXED, _KV_TESTS = _task_files("lsm_kv")

_KV_SOLUTION = """cd /app
cp /solution/fixed/tinykv/wal.py /solution/fixed/tinykv/segment.py /solution/fixed/tinykv/compaction.py tinykv/
python3 -m unittest discover -s unit_tests -t .
"""

_KV_NEGATIVES = [
    NegativeSolution(
        name="visible-bugs-only",
        why="torn-write recovery and partial compaction fixed, the sparse-index lookup of segment.py left broken",
        max_score=0.6,
        script="cp /solution/fixed/tinykv/wal.py /solution/fixed/tinykv/compaction.py /app/tinykv/\n",
    ),
    NegativeSolution(
        name="skip-bad-records",
        why="replay stops at any bad record (hiding real corruption) and the torn tail is never truncated",
        max_score=0.15,
        script="""cd /app
python3 - <<'PY'
from pathlib import Path
path = Path("tinykv/wal.py")
text = path.read_text()
for reason in ("truncated record header", "truncated record payload", "checksum mismatch"):
    text = text.replace(f'raise CorruptLogError(path, offset, "{reason}")', "break")
path.write_text(text)
PY
""",
    ),
    NegativeSolution(
        name="json-file-rewrite",
        why="the store replaced by a JSON file behind the same command line",
        max_score=0.0,
        script=r"""cat > /app/tinykv/cli.py <<'PY'
import argparse, json, os, sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tinykv")
    parser.add_argument("directory")
    parser.add_argument("--memtable-limit", type=int, default=1000)
    parser.add_argument("--sync", action="store_true")
    parser.add_argument("command")
    parser.add_argument("rest", nargs="*")
    parser.add_argument("--start")
    parser.add_argument("--end")
    parser.add_argument("--newest", type=int)
    args = parser.parse_args(argv)
    os.makedirs(args.directory, exist_ok=True)
    path = os.path.join(args.directory, "data.json")
    data = json.load(open(path)) if os.path.exists(path) else {}
    if args.command == "put":
        data[args.rest[0]] = args.rest[1]
    elif args.command == "delete":
        data.pop(args.rest[0], None)
    elif args.command == "get":
        if args.rest[0] not in data:
            return 1
        print(data[args.rest[0]])
    elif args.command == "scan":
        for key in sorted(data):
            print(f"{key}\t{data[key]}")
    elif args.command == "load":
        for line in open(args.rest[0]):
            word, _, rest = line.rstrip("\n").partition(" ")
            if word == "put":
                key, _, value = rest.partition(" ")
                data[key] = value
            elif word == "del":
                data.pop(rest, None)
    elif args.command == "stats":
        print(json.dumps({"segments": [{"entries": len(data), "tombstones": 0}]}))
    json.dump(data, open(path, "w"))
    return 0
PY
""",
    ),
]

# --------------------------------------------------------------------------------------------------------------
# 2. sql-csv-engine-nulls-having

_SQL_APP, _SQL_FIXED, _SQL_TESTS = _task_files("sql_csv")

_SQL_SOLUTION = """cd /app
for module in values functions executor plan planner tokens ast parser; do
  cp /solution/fixed/csvql/$module.py csvql/$module.py
done
python3 -m unittest discover -s unit_tests -t .
"""

_SQL_KEEP_FILTER_AFTER_JOIN = r"""python3 - <<'PY'
from pathlib import Path

path = Path("/app/csvql/planner.py")
text = path.read_text()
fixed = (
    "        condition = _predicate(_conjoin(residual), scope) if residual else None\n"
    "        return plan.HashJoin(left, right, join.kind, left_keys, right_keys, scope, condition)\n"
)
old = (
    "        node = plan.HashJoin(left, right, join.kind, left_keys, right_keys, scope)\n"
    "        if residual:\n"
    "            node = plan.Filter(node, _predicate(_conjoin(residual), scope), scope)\n"
    "        return node\n"
)
assert fixed in text
path.write_text(text.replace(fixed, old))
PY
"""

_SQL_SQLITE_CLI = r"""cat > /app/csvql/cli.py <<'PY'
import argparse, csv, os, sqlite3, sys


def _value(text):
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        text = f"{value:.6f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(prog="csvql")
    parser.add_argument("--data", required=True)
    parser.add_argument("query", nargs="?")
    parser.add_argument("-f", "--file")
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--no-header", action="store_true")
    parser.add_argument("--explain", action="store_true")
    args = parser.parse_args(argv)
    db = sqlite3.connect(":memory:")
    for name in os.listdir(args.data):
        if name.endswith(".csv"):
            rows = list(csv.reader(open(os.path.join(args.data, name))))
            db.execute(f"CREATE TABLE {name[:-4]} ({', '.join(rows[0])})")
            db.executemany(f"INSERT INTO {name[:-4]} VALUES ({', '.join('?' * len(rows[0]))})",
                           [[_value(v) for v in row] for row in rows[1:]])
    if args.explain:
        print("HashJoin INNER\n  Scan people\n  Scan orders")
        return 0
    cursor = db.execute(args.query or open(args.file).read())
    writer = csv.writer(sys.stdout, lineterminator="\n")
    if not args.no_header:
        writer.writerow([d[0] for d in cursor.description])
    for row in cursor:
        writer.writerow([_cell(v) for v in row])
    return 0
PY
"""

_SQL_NEGATIVES = [
    NegativeSolution(
        name="null-rules-only",
        why="NULL comparisons and aggregates fixed; joins and HAVING left as they were",
        max_score=0.35,
        script="cp /solution/fixed/csvql/values.py /solution/fixed/csvql/functions.py /app/csvql/\n",
    ),
    NegativeSolution(
        name="no-join-fixes",
        why="NULL rules and HAVING done, but NULL join keys still match and LEFT JOIN still filters after joining",
        max_score=0.5,
        script="for module in values functions tokens ast parser planner plan; do\n"
               "  cp /solution/fixed/csvql/$module.py /app/csvql/\ndone\n" + _SQL_KEEP_FILTER_AFTER_JOIN,
    ),
    NegativeSolution(
        name="sqlite-shortcut",
        why="the engine replaced by SQLite behind the same command line",
        max_score=0.0,
        script=_SQL_SQLITE_CLI,
    ),
]

# --------------------------------------------------------------------------------------------------------------
# 3. workflow-runner-resume

_WF_APP, _WF_FIXED, _WF_TESTS = _task_files("workflow")

_WF_SOLUTION = """cd /app
cp /solution/fixed/flowrun/dag.py /solution/fixed/flowrun/backoff.py /solution/fixed/flowrun/scheduler.py \\
   /solution/fixed/flowrun/state.py flowrun/
python3 -m unittest discover -s unit_tests -t .
"""

_WF_NEGATIVES = [
    NegativeSolution(
        name="cycle-and-backoff-only",
        why="cycle detection and the backoff formula fixed; the retry count and resuming left broken",
        max_score=0.2,
        script="cp /solution/fixed/flowrun/dag.py /solution/fixed/flowrun/backoff.py /app/flowrun/\n",
    ),
    NegativeSolution(
        name="no-resume-fixes",
        why="cycles, backoff and the retry count fixed; resume still treats unfinished jobs as done and reuses "
            "attempt numbers, and the state is not committed as it happens",
        max_score=0.45,
        script="cp /solution/fixed/flowrun/dag.py /solution/fixed/flowrun/backoff.py /app/flowrun/\n"
               "sed -i 's/            if failures >= job.retries:/            if failures > job.retries:/' "
               "/app/flowrun/scheduler.py\n",
    ),
    NegativeSolution(
        name="state-not-committed",
        why="everything but the state store: a runner that is killed loses what it recorded, so a crashed run "
            "cannot be resumed properly",
        max_score=0.75,
        script="cp /solution/fixed/flowrun/dag.py /solution/fixed/flowrun/backoff.py "
               "/solution/fixed/flowrun/scheduler.py /app/flowrun/\n",
    ),
]

# --------------------------------------------------------------------------------------------------------------
# 4. ledger-import-fx-rounding

_LK_APP, _LK_FIXED, _LK_TESTS = _task_files("ledger")

_LK_SOLUTION = """cd /app
cp /solution/fixed/ledgerkit/money.py /solution/fixed/ledgerkit/rates.py ledgerkit/
cp /solution/fixed/ledgerkit/importers/base.py /solution/fixed/ledgerkit/importers/bank_csv.py \\
   /solution/fixed/ledgerkit/importers/qif.py ledgerkit/importers/
python3 -m unittest discover -s unit_tests -t .
"""

_LK_NEGATIVES = [
    NegativeSolution(
        name="importers-only",
        why="the three importer bugs fixed; rates still taken from the future and conversions rounded to the "
            "source currency",
        max_score=0.5,
        script="cp /solution/fixed/ledgerkit/importers/*.py /app/ledgerkit/importers/\n",
    ),
    NegativeSolution(
        name="fx-only",
        why="rate lookup and conversion rounding fixed; the importers still misread signs and two-digit years",
        max_score=0.35,
        script="cp /solution/fixed/ledgerkit/money.py /solution/fixed/ledgerkit/rates.py /app/ledgerkit/\n",
    ),
    NegativeSolution(
        name="parentheses-only",
        why="only the most visible bug (accounting parentheses read as positive) fixed",
        max_score=0.2,
        script="cp /solution/fixed/ledgerkit/importers/base.py /app/ledgerkit/importers/\n",
    ),
]

TASKS = [
    Spec(
        task_id="lsm-kv-store-recovery",
        held_out=True,  # the Python hard tasks are held out together: near-twins of one another (docs/tasks.md)
        title="Repair crash recovery, compaction and lookups of a log-structured key-value store",
        difficulty="hard",
        category="data-systems",
        instruction="""
/app holds tinykv, our small log-structured key-value store in Python (README.md for the command line,
FORMAT.md for the files of a store: write-ahead log, segment files, manifest). Three reports came in from
production this week:

1. A service was OOM-killed in the middle of a write. Since then the store will not open at all:
   `tinykv: .../wal.log: corrupt record at byte N`. A write that was cut short by a crash never completed and
   must simply be gone; everything written before it must still be there, and whatever is written after the
   recovery must survive later restarts too.
2. Keys that were deleted a long time ago are back after a `compact --newest N`.
3. In our bigger stores `get` says some keys do not exist although `scan` lists them, and the set of missing
   keys changes after a flush or a compaction.

Find the causes and fix them so that the store behaves as FORMAT.md and README.md describe. Real corruption (a
damaged log record that is not the last one) must still make the store refuse to open, naming the file and the
byte offset (exit status 3). Keep the command line, the file formats and the library API as they are. The unit
tests in /app/unit_tests must still pass: you may add tests, but do not change the existing ones or the docs.
""",
        files=_KV_APP,
        tests=_KV_TESTS,
        weights={"test_torn_payload_is_discarded": 1.0, "test_writes_after_recovering_a_torn_header_survive": 1.5,
                 "test_checksum_failure_at_the_tail_versus_the_middle": 1.0,
                 "test_partial_compaction_keeps_deleted_keys_deleted": 1.5,
                 "test_full_compaction_drops_tombstones_and_keeps_every_key": 1.0,
                 "test_every_key_of_a_large_segment_is_found": 1.0, "test_random_workload_matches_a_model": 2.0},
        guards=["test_guard_shipped_files_unchanged", "test_guard_unit_tests_pass",
                "test_guard_still_the_log_structured_store"],
        solution=_KV_SOLUTION,
        solution_files=_KV_FIXED,
        negative_solutions=_KV_NEGATIVES,
        tags=["python", "storage", "lsm-tree", "crash-recovery", "multi-module", "debugging"],
        limits={"agent_timeout_s": 3600, "test_timeout_s": 600, "command_timeout_s": 300},
    ),
    Spec(
        task_id="sql-csv-engine-nulls-having",
        held_out=True,  # the Python hard tasks are held out together: near-twins of one another (docs/tasks.md)
        title="Fix NULL handling and joins of a SQL-over-CSV engine and add HAVING",
        difficulty="hard",
        category="data-systems",
        instruction="""
/app holds csvql, our small SQL engine over CSV files (README.md describes the SQL it accepts, its value rules
and its output; `python3 -m csvql --data DIR "SELECT ..."`). The analysts who use it filed these tickets:

- "Rows with an empty city show up in `WHERE city <> 'Oslo'`, and `WHERE age = NULL` returns the rows whose age
  is empty. Results with NULLs do not match what we get from SQLite on the same data."
- "COUNT(col) and AVG(col) come out wrong on columns that have empty fields."
- "Joining on a column that has empty values pairs up rows that have nothing to do with each other."
- "`LEFT JOIN ... ON a.id = b.a_id AND b.amount > 60` loses left rows instead of keeping them with empty
  right-hand columns."
- Feature request: "Support HAVING after GROUP BY (`GROUP BY city HAVING COUNT(*) >= 3`), including
  conditions on aggregates that are not in the select list, combined with AND/OR/NOT."

The README's rules are the intended behaviour and they follow SQLite: for the SQL the README lists (plus
HAVING), csvql must return the same rows as SQLite does on the same data, empty CSV fields being NULL. Fix the
engine and add HAVING through the layers it needs; keep the engine's own structure (do not hand queries to
SQLite or any other database), its command line and its output format. The unit tests in /app/unit_tests must
still pass: you may add tests, but do not change the existing ones.
""",
        files=_SQL_APP,
        tests=_SQL_TESTS,
        weights={"test_null_comparisons_follow_sql": 1.0, "test_aggregates_ignore_nulls": 1.5,
                 "test_join_keys_that_are_null_match_nothing": 1.0,
                 "test_left_join_applies_the_whole_on_condition": 1.5, "test_having_filters_groups": 1.5,
                 "test_random_queries_match_sqlite": 2.0},
        guards=["test_guard_unit_tests_unchanged_and_pass", "test_guard_still_the_csvql_engine"],
        solution=_SQL_SOLUTION,
        solution_files=_SQL_FIXED,
        negative_solutions=_SQL_NEGATIVES,
        tags=["python", "sql", "query-engine", "null-semantics", "multi-module", "feature", "debugging"],
        limits={"agent_timeout_s": 3600, "test_timeout_s": 600, "command_timeout_s": 300},
    ),
    Spec(
        task_id="workflow-runner-resume",
        held_out=True,  # the Python hard tasks are held out together: near-twins of one another (docs/tasks.md)
        title="Fix cycle detection, retries and resuming of a SQLite-backed workflow runner",
        difficulty="hard",
        category="data-systems",
        instruction="""
/app holds flowrun, the workflow runner of our data team: a workflow file describes a DAG of shell jobs, and
every run's state is kept in a SQLite database so that a run can be followed with `status` and continued with
`resume` (README.md describes the command line and the intended behaviour; `python3 -m flowrun --db FILE ...`).
The on-call engineers collected these problems:

- A workflow in which a few jobs depend on each other in a circle passed `validate`, and `run` reported success
  without ever running those jobs.
- Jobs configured with `retries: 2` run only twice, and the waits between attempts are longer than the
  `backoff` settings say (`max` seems to be ignored too).
- Last night the runner was killed by the OOM killer in the middle of a job. `status` afterwards showed every job
  as pending although several had finished, and `resume` either ran nothing or crashed with
  `sqlite3.IntegrityError`. Resuming a run that had simply failed does not work either.

Fix flowrun so that it behaves as README.md describes: cycles refused wherever they are in the graph, the right
number of attempts and waits, the state recorded as it happens, and `resume` continuing a failed or interrupted
run without running again what already succeeded. Keep the command line, the workflow file format, the JSON of
`status --json` and the database schema as they are. The unit tests in /app/unit_tests must still pass: you may
add tests, but do not change the existing ones, the README or the examples.
""",
        files=_WF_APP,
        tests=_WF_TESTS,
        weights={"test_cycles_anywhere_are_refused": 1.0, "test_retries_and_backoff_delays": 1.5,
                 "test_backoff_really_waits": 0.5, "test_resume_after_the_runner_was_killed": 2.0,
                 "test_resume_after_a_failure": 1.5, "test_resumed_job_gets_a_fresh_retry_budget": 1.0},
        guards=["test_guard_shipped_files_unchanged_and_unit_tests_pass", "test_guard_state_lives_in_sqlite"],
        solution=_WF_SOLUTION,
        solution_files=_WF_FIXED,
        negative_solutions=_WF_NEGATIVES,
        tags=["python", "sqlite", "workflow", "dag", "retries", "crash-recovery", "multi-module", "debugging"],
        limits={"agent_timeout_s": 3600, "test_timeout_s": 600, "command_timeout_s": 300},
    ),
    Spec(
        task_id="ledger-import-fx-rounding",
        held_out=True,  # the Python hard tasks are held out together: near-twins of one another (docs/tasks.md)
        title="Fix the importers, exchange-rate lookup and conversion rounding of a double-entry ledger",
        difficulty="hard",
        category="data-systems",
        instruction="""
/app holds ledgerkit, the small double-entry bookkeeping tool our finance team runs on plain-text journals
(README.md gives the command line and the rules of the books; `python3 -m ledgerkit JOURNAL ...`). Month-end
closing did not reconcile, and the team traced it to the tool:

- Card payments imported from the bank's CSV export show up as income when the bank writes them as `(12.50)`,
  and the statements from our UK bank (separate Debit and Credit columns) come in with every sign reversed.
- Transactions imported from the card company's QIF files are dated in the 1900s when the file writes years
  with two digits (`03/15'24`), so they vanish from every report of the period.
- A report converted to USD as of a Saturday used Monday's rates instead of Friday's.
- Converted reports do not match the spreadsheet: amounts converted from yen or dinars come out wrong by far
  more than rounding should allow, and `convert "1234 JPY" USD ...` prints a whole number of dollars.

Fix ledgerkit so that it follows the README and the format descriptions in its modules. Keep the command line,
the journal format and the report output as they are. The unit tests in /app/unit_tests must still pass: you
may add tests, but do not change the existing ones or the README.
""",
        files=_LK_APP,
        tests=_LK_TESTS,
        weights={"test_csv_amount_notations": 1.5, "test_debit_credit_layout": 1.0, "test_qif_two_digit_years": 1.0,
                 "test_rates_on_days_without_a_rate": 1.0, "test_converted_balances_round_per_target_currency": 1.5,
                 "test_import_and_converted_income_statement": 2.0},
        guards=["test_guard_shipped_files_unchanged_and_unit_tests_pass", "test_guard_still_ledgerkit"],
        solution=_LK_SOLUTION,
        solution_files=_LK_FIXED,
        negative_solutions=_LK_NEGATIVES,
        tags=["python", "accounting", "decimal", "currency", "importers", "multi-module", "debugging"],
        limits={"agent_timeout_s": 3600, "test_timeout_s": 600, "command_timeout_s": 300},
    ),
]
