import unittest

from quill.errors import QuillSyntaxError
from quill.lexer import tokenize
from quill.tokens import EOF_KIND, KEYWORD, NAME, NUMBER, OP, STRING


def kinds(source):
    return [(token.kind, token.value) for token in tokenize(source)][:-1]


class LexerTest(unittest.TestCase):
    def test_numbers(self):
        self.assertEqual(kinds("42 3.5 1_000"), [(NUMBER, 42), (NUMBER, 3.5), (NUMBER, 1000)])

    def test_names_and_keywords(self):
        self.assertEqual(kinds("let x_1 = nil"), [(KEYWORD, "let"), (NAME, "x_1"), (OP, "="), (KEYWORD, "nil")])

    def test_longest_operator_wins(self):
        self.assertEqual([v for _, v in kinds("a ** b // c <= d => e")], ["a", "**", "b", "//", "c", "<=", "d", "=>", "e"])

    def test_plain_strings(self):
        self.assertEqual(kinds('"hello" \'world\''), [(STRING, "hello"), (STRING, "world")])

    def test_newline_escape(self):
        self.assertEqual(kinds(r'"a\nb"'), [(STRING, "a\nb")])

    def test_unicode_escape(self):
        self.assertEqual(kinds(r'"caf\u00e9"'), [(STRING, "café")])

    def test_comments_are_skipped(self):
        self.assertEqual(kinds("1 # one\n2"), [(NUMBER, 1), (NUMBER, 2)])

    def test_positions(self):
        tokens = tokenize("let a = 1;\n  print(a);")
        self.assertEqual((tokens[5].line, tokens[5].column), (2, 3))
        self.assertEqual(tokens[-1].kind, EOF_KIND)

    def test_unterminated_string(self):
        with self.assertRaises(QuillSyntaxError) as caught:
            tokenize('let s = "open;\nprint(s);')
        self.assertEqual(caught.exception.line, 1)

    def test_unexpected_character(self):
        with self.assertRaises(QuillSyntaxError):
            tokenize("let a = 1 @ 2;")

    def test_malformed_number(self):
        with self.assertRaises(QuillSyntaxError):
            tokenize("1__0")


if __name__ == "__main__":
    unittest.main()
