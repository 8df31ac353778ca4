
import shutil
import time

PROJECT = "/app/bake"

SIMPLE = """SRCS = a.c b.c
OBJS = $(patsubst %.c,out/%.o,$(SRCS))
FLAGS = -O2

app: $(OBJS)
\t@echo "link $(FLAGS)" >> build.log
\tcat $^ > $@

out/%.o: %.c
\t@mkdir -p out
\tgrep -v '^#' $< > $@
"""


def bake(project, *args):
    env = dict(os.environ, PYTHONPATH=PROJECT)
    return subprocess.run(["python3", "-m", "bake", *args], capture_output=True, text=True, cwd=project, env=env,
                          timeout=120)


def _project(tmp_path, bakefile, sources):
    (tmp_path / "Bakefile").write_text(bakefile)
    for name, text in sources.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _age(project, stamps):
    for name, seconds in stamps.items():
        os.utime(project / name, (seconds, seconds))


def test_dry_run_lists_everything_that_would_run(tmp_path):
    project = _project(tmp_path, SIMPLE, {"a.c": "alpha\n", "b.c": "beta\n"})
    assert bake(project).returncode == 0
    _age(project, {"a.c": 1000, "b.c": 1000, "out/a.o": 2000, "out/b.o": 2000, "app": 3000})
    (project / "a.c").write_text("alpha 2\n")
    _age(project, {"a.c": 2500})
    result = bake(project, "-n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["mkdir -p out", "grep -v '^#' a.c > out/a.o",
                                          'echo "link -O2" >> build.log', "cat out/a.o out/b.o > app"]
    assert (project / "app").read_text() == "alpha\nbeta\n"  # -n changed nothing
    result = bake(project)
    assert (project / "app").read_text() == "alpha 2\nbeta\n"
    assert bake(project).stdout == "bake: 'app' is up to date.\n"


def test_rebuilt_prerequisite_makes_dependents_stale(tmp_path):
    bakefile = ("report: stage/data.txt\n\twc -l < stage/data.txt > report\n\n"
                "stage/data.txt: data.txt\n\tmkdir -p stage && cp -p data.txt stage/data.txt\n")
    project = _project(tmp_path, bakefile, {"data.txt": "1\n2\n"})
    assert bake(project).returncode == 0
    assert (project / "report").read_text().strip() == "2"
    _age(project, {"stage/data.txt": 1000, "report": 3000})
    (project / "data.txt").write_text("1\n2\n3\n4\n5\n")
    _age(project, {"data.txt": 2000})  # newer than the staged copy, older than the report
    result = bake(project)
    assert result.returncode == 0, result.stderr
    assert "cp -p data.txt stage/data.txt" in result.stdout
    assert (project / "report").read_text().strip() == "5"
    assert bake(project).stdout == "bake: 'report' is up to date.\n"


def test_hash_mode_propagates_content_changes(tmp_path):
    project = _project(tmp_path, SIMPLE, {"a.c": "alpha\n", "b.c": "beta\n"})
    first = bake(project, "--hash")
    assert first.returncode == 0, first.stderr
    assert bake(project, "--hash").stdout == "bake: 'app' is up to date.\n"
    (project / "a.c").write_text("alpha, revised\n")
    result = bake(project, "--hash")
    assert result.returncode == 0, result.stderr
    assert "grep -v '^#' a.c > out/a.o" in result.stdout and "cat out/a.o out/b.o > app" in result.stdout
    assert (project / "app").read_text() == "alpha, revised\nbeta\n"
    # A comment-only change rebuilds out/a.o to the same bytes: app is not relinked.
    (project / "a.c").write_text("# note\nalpha, revised\n")
    result = bake(project, "--hash")
    assert result.stdout == "grep -v '^#' a.c > out/a.o\nbake: 'app' is up to date.\n"
    (project / "b.c").write_text("beta, revised\n")
    bake(project, "--hash")
    assert (project / "app").read_text() == "alpha, revised\nbeta, revised\n"
    assert (project / "build.log").read_text().count("link") == 3


def test_hash_mode_recipe_changes(tmp_path):
    project = _project(tmp_path, SIMPLE, {"a.c": "alpha\n", "b.c": "beta\n"})
    assert bake(project, "--hash").returncode == 0
    result = bake(project, "--hash", "FLAGS=-O0")
    assert result.stdout == 'cat out/a.o out/b.o > app\n', result.stdout
    assert bake(project, "--hash", "FLAGS=-O0").stdout == "bake: 'app' is up to date.\n"
    (project / "Bakefile").write_text(SIMPLE.replace("FLAGS = -O2", "FLAGS = -O3"))
    result = bake(project, "--hash")
    assert result.stdout == 'cat out/a.o out/b.o > app\n', result.stdout
    assert (project / "build.log").read_text() == "link -O2\nlink -O0\nlink -O3\n"
    (project / "Bakefile").write_text(SIMPLE.replace("FLAGS = -O2", "FLAGS = -O3") + "# a comment\n")
    assert bake(project, "--hash").stdout == "bake: 'app' is up to date.\n"


ORDER_ONLY = """app: out/a.o out/b.o | out logs
\t@echo "deps=$^ order=$|" > logs/link.txt
\tcat $^ > $@

out/a.o: a.c | out
\tgrep -v '^#' $< > $@

out/b.o: b.c | out
\tgrep -v '^#' $< > $@

out:
\tmkdir -p out

logs:
\tmkdir -p logs
"""


def test_order_only_prerequisites(tmp_path):
    project = _project(tmp_path, ORDER_ONLY, {"a.c": "alpha\n", "b.c": "beta\n"})
    result = bake(project)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines.index("mkdir -p out") < lines.index("grep -v '^#' a.c > out/a.o")
    assert (project / "logs" / "link.txt").read_text() == "deps=out/a.o out/b.o order=out logs\n"
    assert (project / "app").read_text() == "alpha\nbeta\n"
    _age(project, {"a.c": 1000, "b.c": 1000, "out/a.o": 2000, "out/b.o": 2000, "app": 3000})
    (project / "out" / "scratch.tmp").write_text("x")  # the folder is now newer than everything
    (project / "logs" / "other.txt").write_text("x")
    assert bake(project).stdout == "bake: 'app' is up to date.\n"
    shutil.rmtree(project / "logs")
    result = bake(project)
    assert result.stdout == "mkdir -p logs\nbake: 'app' is up to date.\n", result.stdout
    graph = bake(project, "--print-graph").stdout
    assert "app [target]: out/a.o out/b.o | out logs" in graph


PATTERN = """NAMES = one two three four five six
OBJS = $(patsubst %,obj/%.o,$(NAMES))

all.txt: $(OBJS)
\tcat $^ > $@

obj/%.o: src/%.c | obj
\tgrep -v '^#' $< > $@

obj:
\tsleep 1
\tmkdir -p obj
"""


def test_order_only_in_pattern_rules_in_parallel(tmp_path):
    names = ["one", "two", "three", "four", "five", "six"]
    project = _project(tmp_path, PATTERN, {f"src/{n}.c": f"# {n}\n{n} body\n" for n in names})
    result = bake(project, "-j", "4")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "all.txt").read_text() == "".join(f"{n} body\n" for n in names)
    (project / "obj" / "cache.tmp").write_text("x")
    os.utime(project / "obj", (time.time() + 100, time.time() + 100))
    assert bake(project, "-j", "4").stdout == "bake: 'all.txt' is up to date.\n"
    (project / "src" / "four.c").write_text("four body, new\n")
    _age(project, {"src/four.c": time.time() + 200})
    result = bake(project, "-j", "4")
    assert result.stdout == "grep -v '^#' src/four.c > obj/four.o\ncat " + " ".join(
        f"obj/{n}.o" for n in names) + " > all.txt\n", result.stdout


def test_guard_suite_unchanged_and_passing():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/bake/tests/"):
            assert unchanged(path), path
    result = run("python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".", cwd=PROJECT, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_guard_no_rewrite():
    probe = ("import bake.cli as c, bake.executor as e; print(c.parse.__module__, c.build_graph.__module__, "
             "c.Builder.__module__, e.timestamp_verdict.__module__, e.hash_verdict.__module__, e.BuildState.__module__)")
    result = subprocess.run(["python3", "-c", probe], capture_output=True, text=True, cwd=PROJECT, timeout=60)
    assert result.stdout.split() == ["bake.parser", "bake.graph", "bake.executor", "bake.staleness",
                                     "bake.staleness", "bake.state"], result.stderr
