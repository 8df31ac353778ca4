import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/docs/LANGUAGE.md': '39bc83e3b21ad258c8bb1215ad248b9b45a9e61355f05aec2a7076fc5e79ed0b', '/app/examples/fizzbuzz.ql': '4d177a7e3178e0e54a7f24f118db3c748ccfd1bf7ebad5f044a1b3414141cdb1', '/app/examples/primes.ql': '0f37673e76541518c9d614e294cc527740f08089b82ce1ac41c36563183b48c2', '/app/examples/words.ql': 'a50eda0018300e9a5a1cc09ba31c4f1f67b246a5f66052890604c3fbd4a1fbb8', '/app/quill/__init__.py': '302234dccb6e7c92813fe2f3f6bf65c0c5f4b72f7783ea2e76cf7d83966e238b', '/app/quill/__main__.py': '82884b3d478175e2e0cc42b66d6d4d7166fb21c115ea9f775b5494235813d896', '/app/quill/cli.py': '615657fe577d009df1aff0d6275e80e5bb85300d1f72f0651f6550df45c5aa91', '/app/quill/environment.py': 'd4c4b7e58656af0ccfea03c319ac29c6b542ddf4eb37ba40dbe4aa4022660108', '/app/quill/errors.py': 'cd01850a2f37cb5f66c0909dd32641a1d1e303d5fe04c4864c6807ad54af4880', '/app/quill/interpreter.py': 'fd3ec88b4cddc1539f15703b225392d6b31dc00b35684e1e89b985e6d31f79c4', '/app/quill/lexer.py': 'df1247e67a53ad7ef545e0a52773e5fa21204b736aba25a27655a07bd524123e', '/app/quill/nodes.py': 'fa082916970e729d83f5dd90c31d7f2fcdc0d78a183b39d055cfa58e810359c0', '/app/quill/parser.py': 'b0e3d939982449ba5b7b7704336cf5ba48fb91607cfd2bd6b2ce3b38dc691e0c', '/app/quill/repl.py': '5f6cb3805143a2472cc3479c0f689fa9d6fbe2329ff47d941fa9ca70b5fd3bbb', '/app/quill/stdlib.py': '608d8974da2f6ad136c43308c4b144691a1bbbcf171ee506592eb82706834211', '/app/quill/tokens.py': '750e819c010675c03b86063bf3fe0a1856d31812bee17281985cab3c958eceae', '/app/quill/values.py': '21377bc0db16752a56ad9abfdd9a644592a88c64b528b74dddadaa2483b3f8f7', '/app/unit_tests/__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/unit_tests/helpers.py': '9a09f31e4e90ed7bbe2121a87a3e25e814f538d3ab3e82b01034a4f85094ba2e', '/app/unit_tests/test_cli.py': '11763567ba522ac7d4a49beb22d7e300300872e479ad50f98d7d357201dc5234', '/app/unit_tests/test_interpreter.py': '1cadc85459f35188ad22a9a4e789321f58ccdd982533ad2e80dc77369b00fbe6', '/app/unit_tests/test_lexer.py': '3984dc2fc500124562ea5f8b72fa30f8dac90c4b685423d54863b48facba1593', '/app/unit_tests/test_parser.py': 'a7a4932078bdf800ab2ca6a08db029dc5a8b6ed1211e462e9a4c91fe1418b70b', '/app/unit_tests/test_stdlib.py': 'fd9044b73a9691ce54e5e945def102986c14c2bf4c27341756e622e3824737a1'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


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
