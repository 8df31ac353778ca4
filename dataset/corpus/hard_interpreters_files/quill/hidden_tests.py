import tempfile

APP = "/app"
SHIPPED_TESTS = ["/app/unit_tests/__init__.py", "/app/unit_tests/helpers.py", "/app/unit_tests/test_lexer.py",
                 "/app/unit_tests/test_parser.py", "/app/unit_tests/test_interpreter.py", "/app/unit_tests/test_stdlib.py",
                 "/app/unit_tests/test_cli.py"]


def quill(source):
    """Run a Quill program with the shipped command line; (exit status, stdout, stderr)."""
    with tempfile.NamedTemporaryFile("w", suffix=".ql", delete=False, encoding="utf-8") as handle:
        handle.write(source)
    result = run("python3", "-m", "quill", handle.name, cwd=APP, timeout=60)
    os.unlink(handle.name)
    return result.returncode, result.stdout, result.stderr


def output(source):
    status, out, err = quill(source)
    assert status == 0, f"exit {status}: {err}"
    return out


def test_escapes_in_string_literals():
    source = r'''
let path = "C:\\new\\table";
print(path);
print(len(path), len("\\"), len("a\\nb"), len("\"q\""));
print("tab[\t] quote[\"] single['] \u0041\\u0041");
print('it\'s', "\\\\server\\share");
let empty_end = "\\";
print(len(empty_end + "x"), "x\\" + "y");
'''
    assert output(source) == ("C:\\new\\table\n12 1 4 3\n"
                              "tab[\t] quote[\"] single['] A\\u0041\n"
                              "it's \\\\server\\share\n2 x\\y\n")


def test_repr_reads_back_as_the_same_string():
    # built with chr() so that only the way strings are shown is checked here, not the literals
    source = r'''
let bs = chr(92);
let q = chr(34);
let s = "a" + bs + "b" + q + "c" + chr(10) + "d" + chr(9) + bs + "n";
print(repr(s));
print([s, bs]);
print({bs: q});
print(repr(bs + bs));
'''
    assert output(source) == ('"a\\\\b\\"c\\nd\\t\\\\n"\n'
                              '["a\\\\b\\"c\\nd\\t\\\\n", "\\\\"]\n'
                              '{"\\\\": "\\""}\n'
                              '"\\\\\\\\"\n')


def test_operator_precedence_and_associativity():
    source = '''
print(-2 ** 2, (-2) ** 2, 2 ** 3 ** 2, 2 ** -1);
print(1 + 7 % 4, 10 - 9 % 4 * 2, 3 * 5 % 4, -7 % 3);
print(-3 * 2 + 1, 2 * -3 ** 2, 100 // 7 % 3, 20 - 2 ** 2 ** 2 // 3);
print(not 1 == 2, not true or true, 1 + 2 == 3 and 2 ** 2 == 4);
let x = 3; x -= 2 ** 2 % 3; print(x);
'''
    assert output(source) == "-4 4 512 0.5\n4 8 3 2\n-5 -18 2 15\n" "true true true\n2\n"


def test_functions_see_their_defining_scope():
    source = '''
fn make_counter(step) {
  let count = 0;
  return fn() { count += step; return count; };
}
let a = make_counter(1);
let b = make_counter(10);
a(); a(); b();
print(a(), b());
let label = "global";
fn show() { return label; }
fn caller() { let label = "caller"; return show(); }
print(caller());
fn compose(f, g) { return fn(x) => f(g(x)); }
let inc = fn(x) => x + 1;
let dbl = fn(x) => x * 2;
print(compose(inc, dbl)(5), compose(dbl, inc)(5));
fn outer() {
  let secret = 42;
  fn inner() { return secret; }
  return inner;
}
let leaked = outer();
let secret = 0;
print(leaked());
'''
    assert output(source) == "3 20\nglobal\n11 12\n42\n"


def test_each_loop_turn_has_its_own_variable():
    source = '''
let fns = [];
for i in range(4) { push(fns, fn() => i * i); }
print(map(fn(f) => f(), fns));
let named = {};
for key in ["x", "y"] { named[key] = fn() => upper(key); }
print(named["x"](), named["y"]());
'''
    assert output(source) == "[0, 1, 4, 9]\nX Y\n"


def test_return_from_inside_loops():
    source = '''
fn find(xs, wanted) {
  for x in xs {
    if x == wanted { return "found " + str(x); }
  }
  return "missing";
}
fn first_square_over(limit) {
  let n = 1;
  while true {
    if n * n > limit { return n; }
    n += 1;
  }
}
fn nested() {
  for a in range(1, 10) {
    for b in range(1, 10) {
      if a * b == 12 and a < b { return [a, b]; }
    }
  }
  return nil;
}
print(find([1, 2, 3], 2), find([1, 2, 3], 7));
print(first_square_over(50), nested());
'''
    assert output(source) == "found 2 missing\n8 [2, 6]\n"


def test_sample_program():
    here = Path(__file__).parent
    source = (here / "sample.ql").read_text(encoding="utf-8")
    assert output(source) == (here / "sample.out").read_text(encoding="utf-8")


def test_guard_shipped_tests_and_docs_unchanged_and_passing():
    for path in [*SHIPPED_TESTS, "/app/docs/LANGUAGE.md"]:
        assert unchanged(path), f"{path} was changed"
    result = run("python3", "-m", "unittest", "discover", "-s", "unit_tests", "-t", ".", cwd=APP, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def test_guard_the_interpreter_is_still_the_quill_package():
    # the modules keep their roles: parse() gives quill.nodes trees, the Interpreter runs them
    code = (
        "import io\n"
        "from quill.lexer import tokenize\n"
        "from quill.parser import parse\n"
        "from quill import nodes\n"
        "from quill.interpreter import Interpreter\n"
        "program = parse(tokenize('let a = [1, 2]; print(len(a) + 40);'))\n"
        "assert isinstance(program, nodes.Program)\n"
        "assert isinstance(program.statements[0], nodes.Let)\n"
        "out = io.StringIO()\n"
        "Interpreter(out=out).run(program)\n"
        "print(out.getvalue().strip())\n"
    )
    result = run("python3", "-c", code, cwd=APP)
    assert result.returncode == 0 and result.stdout.strip() == "42", result.stderr
    main = Path("/app/quill/__main__.py").read_text()
    assert "from quill.cli import main" in main
    status, out, err = quill("print(1 +);")
    assert status == 2 and "syntax error at line 1" in err
