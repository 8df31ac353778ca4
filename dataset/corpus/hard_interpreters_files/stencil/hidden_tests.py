import shutil
import tempfile

APP = "/app"
HERE = Path(__file__).parent
SHIPPED_TESTS = ["/app/unit_tests/__init__.py", "/app/unit_tests/test_parsing.py", "/app/unit_tests/test_rendering.py"]


def stencil(templates, name, data=None, *options):
    """Render ``name`` from a fresh directory holding ``templates`` with the shipped CLI; (status, out, err)."""
    folder = tempfile.mkdtemp()
    try:
        for path, text in templates.items():
            Path(folder, path).write_text(text)
        arguments = ["python3", "-m", "stencil", name, "--dir", folder, *options]
        if data is not None:
            Path(folder, "data.json").write_text(json.dumps(data))
            arguments += ["--data", str(Path(folder, "data.json"))]
        result = run(*arguments, cwd=APP)
        return result.returncode, result.stdout, result.stderr
    finally:
        shutil.rmtree(folder)


def rendered(templates, name, data=None, *options):
    status, out, err = stencil(templates, name, data, *options)
    assert status == 0, f"exit {status}: {err}"
    return out


def test_super_walks_the_whole_inheritance_chain():
    folder = HERE / "chain"
    result = run("python3", "-m", "stencil", "article.html", "--dir", str(folder), "--data", str(folder / "data.json"), cwd=APP)
    assert result.returncode == 0, result.stderr
    assert "<title>Escaping &lt;tags&gt; | Docs - Site</title>" in result.stdout
    assert "<footer>[(c) 2026 | Docs team]</footer>" in result.stdout
    templates = {
        "a.html": "{% block x %}A{% endblock %}",
        "b.html": '{% extends "a.html" %}{% block x %}B({{ super() }}){% endblock %}',
        "c.html": '{% extends "b.html" %}{% block x %}C({{ super() }}){% endblock %}',
        "d.html": '{% extends "c.html" %}{% block x %}D({{ super() }}){% endblock %}',
    }
    assert rendered(templates, "d.html") == "D(C(B(A)))"
    assert rendered(templates, "c.html") == "C(B(A))"


def test_join_escapes_what_it_joins():
    templates = {"t.html": '{{ xs | join(" <br> ") }}|{{ ys | join(",") }}|{{ xs | join }}'}
    data = {"xs": ["<script>", "a&b"], "ys": [1, 2]}
    assert rendered(templates, "t.html", data) == "&lt;script&gt; &lt;br&gt; a&amp;b|1,2|&lt;script&gt;a&amp;b"
    assert rendered(templates, "t.html", data, "--no-autoescape") == "<script> <br> a&b|1,2|<script>a&b"
    safe = {"t.html": '{{ [x | safe, y] | join("/") }}'}
    assert rendered(safe, "t.html", {"x": "<i>ok</i>", "y": "<b>"}) == "<i>ok</i>/&lt;b&gt;"


def test_macros_with_defaults_and_keywords():
    templates = {"t.html": (
        '{% macro field(name, value="", type="text") -%}'
        '<input type="{{ type }}" name="{{ name }}" value="{{ value }}">'
        '{%- endmacro %}'
        '{{ field("q") }}\n'
        '{{ field("age", 42, "number") }}\n'
        '{{ field("pw", type="password") }}\n'
        '{{ field(value=who, name="n") }}\n'
        '{% macro pair(a, b) %}[{{ a }}|{{ b }}]{% endmacro %}{{ pair(1) }}{{ pair(b=2, a=1) }}'
    )}
    assert rendered(templates, "t.html", {"who": "<Ann & Bob>"}) == (
        '<input type="text" name="q" value="">\n'
        '<input type="number" name="age" value="42">\n'
        '<input type="password" name="pw" value="">\n'
        '<input type="text" name="n" value="&lt;Ann &amp; Bob&gt;">\n'
        '[1|][1|2]')


def test_macros_call_each_other_and_recurse():
    templates = {"t.html": (
        "{{ outer(3) }}|{{ countdown(3) }}|{% for i in [1, 2] %}{{ show(i) }}{% endfor %}|{{ label }}"
        "{% macro countdown(n) %}{{ n }}{% if n > 0 %},{{ countdown(n - 1) }}{% endif %}{% endmacro %}"
        "{% macro outer(x) %}<{{ inner(x * 2) }}>{% endmacro %}"
        "{% macro inner(y) %}{{ y }}{{ label }}{% endmacro %}"
        "{% macro show(label) %}{{ label }}{% endmacro %}"
    )}
    assert rendered(templates, "t.html", {"label": "!"}) == "<6!>|3,2,1,0|12|!"


def test_import_binds_another_templates_macros():
    templates = {
        "forms.html": ('{% set style = "plain" %}'
                       '{% macro button(text, kind=style) %}<button class="{{ kind }}">{{ text }}</button>{% endmacro %}'
                       '{% macro secret() %}[{{ who }}]{% endmacro %}'
                       'this text never shows'),
        "page.html": ('{% import "forms.html" as forms %}{{ forms.button("Go & see") }}'
                      '{{ forms.button("x", kind="big") }}{{ forms.secret() }}'),
    }
    assert rendered(templates, "page.html", {"who": "caller"}) == (
        '<button class="plain">Go &amp; see</button><button class="big">x</button>[]')


def test_macro_misuse_is_reported():
    cases = [
        ('{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}', "m"),
        ('{% macro m(a) %}{{ a }}{% endmacro %}{{ m(b=1) }}', "b"),
        ('{% macro m(a) %}never closed', "endmacro"),
    ]
    for source, fragment in cases:
        status, out, err = stencil({"t.html": source}, "t.html")
        assert status == 1 and out == "", (source, status, out)
        assert "stencil: t.html" in err and fragment in err, (source, err)


def test_shop_site():
    folder = HERE / "site"
    result = run("python3", "-m", "stencil", "catalog.html", "--dir", str(folder), "--data", str(folder / "data.json"), cwd=APP)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (folder / "catalog.expected").read_text()


def test_guard_shipped_tests_unchanged_and_passing():
    for path in SHIPPED_TESTS:
        assert unchanged(path), f"{path} was changed"
    result = run("python3", "-m", "unittest", "discover", "-s", "unit_tests", "-t", ".", cwd=APP, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def test_guard_templates_are_still_compiled_to_python():
    code = (
        "from stencil import Environment\n"
        "from stencil.compiler import compile_template\n"
        "from stencil.parser import parse_template\n"
        "t = Environment().from_string('{% for x in xs %}{{ x }}{% endfor %}')\n"
        "assert 'def root(' in t.code and 'for ' in t.code, t.code\n"
        "assert 'def root(' in compile_template(parse_template('a{{ b }}'))\n"
        "print(t.render(xs=[1, 2]))\n"
    )
    result = run("python3", "-c", code, cwd=APP)
    assert result.returncode == 0 and result.stdout.strip() == "12", result.stderr
