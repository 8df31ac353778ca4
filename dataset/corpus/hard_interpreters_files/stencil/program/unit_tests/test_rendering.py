import io
import json
import os
import tempfile
import unittest

from stencil import DictLoader, Environment, Markup
from stencil.cli import main
from stencil.errors import TemplateNotFound, TemplateRuntimeError


def render(source, autoescape=True, **variables):
    return Environment(autoescape=autoescape).from_string(source).render(variables)


class RenderTest(unittest.TestCase):
    def test_output_and_escaping(self):
        self.assertEqual(render("<b>{{ x }}</b>", x="<i>&"), "<b>&lt;i&gt;&amp;</b>")
        self.assertEqual(render("{{ x }}", autoescape=False, x="<i>"), "<i>")
        self.assertEqual(render("{{ x | safe }}", x="<i>"), "<i>")

    def test_undefined(self):
        self.assertEqual(render("[{{ nope }}{{ nope.deeper }}]{% for x in nope %}x{% endfor %}"), "[]")

    def test_conditions(self):
        source = "{% if n > 2 %}big{% elif n > 0 %}small{% else %}none{% endif %}"
        self.assertEqual([render(source, n=n) for n in (5, 1, 0)], ["big", "small", "none"])

    def test_loops(self):
        source = "{% for x in xs %}{{ loop.index }}:{{ x }}{% if not loop.last %},{% endif %}{% else %}empty{% endfor %}"
        self.assertEqual(render(source, xs=["a", "b"]), "1:a,2:b")
        self.assertEqual(render(source, xs=[]), "empty")
        self.assertEqual(render("{% for k, v in d %}{{ k }}={{ v }};{% endfor %}", d={"a": 1, "b": 2}), "a=1;b=2;")

    def test_set_and_arithmetic(self):
        self.assertEqual(render("{% set t = a * 2 + 1 %}{{ t }} {{ 7 // 2 }} {{ 'x' ~ 1 }}", a=3), "7 3 x1")

    def test_filters(self):
        self.assertEqual(render("{{ s | upper }} {{ s | title }} {{ xs | length }} {{ missing | default('d') }}",
                                s="hello world", xs=[1, 2]), "HELLO WORLD Hello World 2 d")
        self.assertEqual(render("{{ xs | sort | reverse | first }} {{ 3.7 | round }} {{ s | truncate(8) }}",
                                xs=[2, 9, 4], s="a long sentence"), "9 4 a lon...")

    def test_join_of_plain_text(self):
        self.assertEqual(render("{{ xs | join(', ') }}", xs=["a", "b"]), "a, b")

    def test_two_level_inheritance(self):
        env = Environment(DictLoader({
            "base.html": "<h1>{% block title %}Base{% endblock %}</h1>{% block body %}-{% endblock %}",
            "page.html": '{% extends "base.html" %}ignored{% block title %}Page/{{ super() }}{% endblock %}',
        }))
        self.assertEqual(env.get_template("page.html").render(), "<h1>Page/Base</h1>-")

    def test_include_shares_variables(self):
        env = Environment(DictLoader({"a.html": "[{% include 'b.html' %}]", "b.html": "{{ who }}"}))
        self.assertEqual(env.get_template("a.html").render(who="me"), "[me]")

    def test_errors(self):
        with self.assertRaises(TemplateNotFound):
            Environment(DictLoader({})).get_template("x.html")
        with self.assertRaises(TemplateRuntimeError):
            render("{{ 1 / 0 }}")
        with self.assertRaises(TemplateRuntimeError):
            render("{{ x | nosuchfilter }}", x=1)

    def test_markup_concatenation_escapes(self):
        self.assertEqual(Markup("<b>") + "<i>", "<b>&lt;i&gt;")


class CliTest(unittest.TestCase):
    def test_render_from_directory(self):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "t.html"), "w") as handle:
                handle.write("Hi {{ name }} ({{ n }})")
            with open(os.path.join(folder, "d.json"), "w") as handle:
                json.dump({"n": 3}, handle)
            out, err = io.StringIO(), io.StringIO()
            status = main(["t.html", "--dir", folder, "--data", os.path.join(folder, "d.json"), "--var", "name=<A>"],
                          stdout=out, stderr=err)
            self.assertEqual((status, out.getvalue()), (0, "Hi &lt;A&gt; (3)"))

    def test_missing_template(self):
        out, err = io.StringIO(), io.StringIO()
        self.assertEqual(main(["nope.html", "--dir", "."], stdout=out, stderr=err), 1)
        self.assertIn("not found", err.getvalue())


if __name__ == "__main__":
    unittest.main()
