import unittest

from bake.errors import BakefileSyntaxError, ExpansionError
from bake.parser import parse
from bake.variables import expand, patsubst, pattern_match


class VariablesTest(unittest.TestCase):
    def test_references(self):
        variables = {"A": "1", "B": "$(A)2", "C": "${B}3"}
        self.assertEqual(expand("$(C) $$HOME $(MISSING_VARIABLE_X)", variables), "123 $HOME ")

    def test_automatic(self):
        self.assertEqual(expand("$@ <- $< ($^)", {}, {"@": "t", "<": "a", "^": "a b"}), "t <- a (a b)")

    def test_self_reference_is_an_error(self):
        with self.assertRaises(ExpansionError):
            expand("$(A)", {"A": "x $(A)"})

    def test_patterns(self):
        self.assertEqual(pattern_match("%.o", "main.o"), "main")
        self.assertIsNone(pattern_match("%.o", ".o"))
        self.assertEqual(pattern_match("out/%.o", "out/a/b.o"), "a/b")
        self.assertEqual(patsubst("%.c", "%.o", "a.c b.h c.c"), "a.o b.h c.o")
        self.assertEqual(expand("$(patsubst %.c,obj/%.o,$(S))", {"S": "x.c y.c"}), "obj/x.o obj/y.o")


class ParserTest(unittest.TestCase):
    def test_rules_and_variables(self):
        bakefile = parse("CC = gcc\nOBJS := a.o b.o\nOBJS += c.o\n\napp: $(OBJS)\n\t$(CC) -o $@ $^\n\n"
                         "%.o: %.c\n\t$(CC) -c $<\n")
        self.assertEqual(bakefile.default_goal, "app")
        self.assertEqual(bakefile.rules[0].prerequisites, ["a.o", "b.o", "c.o"])
        self.assertEqual(bakefile.rules[0].recipe, ["$(CC) -o $@ $^"])
        self.assertTrue(bakefile.rules[1].is_pattern)

    def test_overrides_win(self):
        bakefile = parse("MODE = debug\nall: ; echo $(MODE)\n", overrides={"MODE": "release"})
        self.assertEqual(bakefile.variables["MODE"], "release")

    def test_conditional_assignment(self):
        bakefile = parse("A ?= 1\nA ?= 2\nB = x\nB ?= y\n")
        self.assertEqual((bakefile.variables["A"], bakefile.variables["B"]), ("1", "x"))

    def test_phony_and_comments(self):
        bakefile = parse("# top\n.PHONY: all clean\nall: app # trailing\n\techo '#not a comment'\n")
        self.assertEqual(bakefile.phony, {"all", "clean"})
        self.assertEqual(bakefile.rules[0].prerequisites, ["app"])
        self.assertEqual(bakefile.rules[0].recipe, ["echo '#not a comment'"])

    def test_continuation_lines(self):
        bakefile = parse("SRCS = a.c \\\n       b.c\nall: $(SRCS)\n")
        self.assertEqual(bakefile.rules[0].prerequisites, ["a.c", "b.c"])

    def test_errors_name_the_line(self):
        with self.assertRaises(BakefileSyntaxError) as caught:
            parse("A = 1\n\n\techo orphan\n")
        self.assertIn("Bakefile:3:", str(caught.exception))
        with self.assertRaises(BakefileSyntaxError) as caught:
            parse("all: x\nthis line has no separator\n")
        self.assertIn("Bakefile:2: missing separator", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
