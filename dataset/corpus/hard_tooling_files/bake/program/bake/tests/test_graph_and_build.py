import io
import os
import tempfile
import unittest

from bake.errors import GraphError
from bake.executor import Builder, Options
from bake.graph import build_graph
from bake.parser import parse

BAKEFILE = """
OBJS = a.o b.o
app: $(OBJS)
\tcat $^ > $@
%.o: %.src
\tcp $< $@
.PHONY: clean
clean:
\trm -f *.o app
"""


class GraphTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.root = self.folder.name
        for name in ("a.src", "b.src"):
            with open(os.path.join(self.root, name), "w") as handle:
                handle.write(name + "\n")

    def tearDown(self):
        self.folder.cleanup()

    def test_order_puts_dependencies_first(self):
        graph = build_graph(parse(BAKEFILE), ["app"], self.root)
        self.assertEqual(graph.order, ["a.src", "a.o", "b.src", "b.o", "app"])
        self.assertEqual(graph.nodes["a.o"].stem, "a")
        self.assertTrue(graph.nodes["a.src"].source)

    def test_missing_source(self):
        os.remove(os.path.join(self.root, "b.src"))
        with self.assertRaises(GraphError) as caught:
            build_graph(parse(BAKEFILE), ["app"], self.root)
        self.assertIn("no rule to make target 'b.o', needed by 'app'", str(caught.exception))

    def test_cycle(self):
        with self.assertRaises(GraphError) as caught:
            build_graph(parse("a: b\n\ttouch a\nb: c\n\ttouch b\nc: a\n\ttouch c\n"), ["a"], self.root)
        self.assertIn("circular dependency: a -> b -> c -> a", str(caught.exception))

    def _build(self, *goals, **options):
        out = io.StringIO()
        bakefile = parse(BAKEFILE)
        builder = Builder(bakefile, build_graph(bakefile, list(goals), self.root), self.root, Options(**options), out)
        return builder.build(), out.getvalue()

    def test_full_then_nothing(self):
        outcome, printed = self._build("app")
        self.assertTrue(outcome.ok)
        self.assertEqual(outcome.ran, ["a.o", "b.o", "app"])
        with open(os.path.join(self.root, "app")) as handle:
            self.assertEqual(handle.read(), "a.src\nb.src\n")
        outcome, printed = self._build("app")
        self.assertEqual((outcome.ran, printed), ([], ""))

    def test_parallel_build_gives_the_same_result(self):
        outcome, _ = self._build("app", jobs=4)
        self.assertTrue(outcome.ok)
        self.assertEqual(sorted(outcome.ran), ["a.o", "app", "b.o"])
        self.assertEqual(outcome.ran[-1], "app")

    def test_failed_recipe_stops_and_leaves_no_target(self):
        bakefile = parse("all: x y\nx:\n\techo partial > x; exit 3\ny:\n\ttouch y\n")
        out = io.StringIO()
        builder = Builder(bakefile, build_graph(bakefile, ["all"], self.root), self.root, Options(), out)
        outcome = builder.build()
        self.assertEqual(outcome.failed, ["x"])
        self.assertIn("bake: *** [x] Error 3", out.getvalue())
        self.assertFalse(os.path.exists(os.path.join(self.root, "x")))

    def test_hash_mode_skips_unchanged_content(self):
        self._build("app", use_hash=True)
        os.utime(os.path.join(self.root, "a.src"), (1, 1))
        outcome, _ = self._build("app", use_hash=True)
        self.assertEqual(outcome.ran, [])


if __name__ == "__main__":
    unittest.main()
