import unittest

from flowrun.backoff import BackoffPolicy
from flowrun.dag import Graph
from flowrun.errors import CycleError, SpecError
from flowrun.spec import parse_workflow


def workflow(jobs, **extra):
    return parse_workflow({"name": "t", "jobs": jobs, **extra})


class SpecTest(unittest.TestCase):
    def test_defaults_apply(self):
        wf = workflow({"a": {"command": "true"}, "b": {"command": "true", "deps": ["a"], "retries": 4}},
                      defaults={"retries": 1, "backoff": {"base": 0.5}})
        self.assertEqual(wf.jobs["a"].retries, 1)
        self.assertEqual(wf.jobs["b"].retries, 4)
        self.assertEqual(wf.jobs["a"].backoff, BackoffPolicy(0.5, 2.0, 60.0))
        self.assertEqual(wf.jobs["b"].deps, ("a",))

    def test_unknown_dependency(self):
        with self.assertRaises(SpecError) as caught:
            workflow({"a": {"command": "true", "deps": ["nope"]}})
        self.assertIn("unknown job 'nope'", str(caught.exception))

    def test_bad_fields(self):
        for jobs in ({"a": {"command": ""}}, {"a": {"command": "x", "retries": -1}},
                     {"a": {"command": "x", "colour": "red"}}, {"bad name": {"command": "x"}},
                     {"a": {"command": "x", "env": {"K": 1}}}):
            with self.assertRaises(SpecError):
                workflow(jobs)

    def test_source_is_canonical(self):
        one = workflow({"a": {"command": "true"}, "b": {"command": "true"}})
        two = parse_workflow({"jobs": {"b": {"command": "true"}, "a": {"command": "true"}}, "name": "t"})
        self.assertEqual(one.source, two.source)


class GraphTest(unittest.TestCase):
    def test_order_is_deterministic(self):
        graph = Graph({"d": ("b", "c"), "b": ("a",), "c": ("a",), "a": (), "e": ()})
        self.assertEqual(graph.topological_order(), ["a", "b", "c", "d", "e"])
        self.assertEqual(graph.levels(), {"a": 0, "e": 0, "b": 1, "c": 1, "d": 2})

    def test_cycle_through_a_root_is_found(self):
        graph = Graph({"root": (), "x": ("root", "z"), "y": ("x",), "z": ("y",)})
        cycle = graph.find_cycle()
        self.assertEqual(cycle[0], cycle[-1])
        self.assertEqual(set(cycle), {"x", "y", "z"})
        with self.assertRaises(CycleError):
            graph.topological_order()

    def test_diamond_is_not_a_cycle(self):
        graph = Graph({"a": (), "b": ("a",), "c": ("a",), "d": ("b", "c")})
        self.assertIsNone(graph.find_cycle())

    def test_relatives(self):
        graph = Graph({"a": (), "b": ("a",), "c": ("b",), "d": ()})
        self.assertEqual(graph.descendants("a"), {"b", "c"})
        self.assertEqual(graph.ancestors("c"), {"a", "b"})
        self.assertIn('"a" -> "b";', graph.to_dot())


class BackoffTest(unittest.TestCase):
    def test_retry_numbers_start_at_one(self):
        with self.assertRaises(ValueError):
            BackoffPolicy().delay(0)

    def test_delays_grow(self):
        delays = BackoffPolicy(1.0, 3.0, 1000.0).delays(3)
        self.assertEqual(len(delays), 3)
        self.assertTrue(delays[0] < delays[1] < delays[2])


if __name__ == "__main__":
    unittest.main()
