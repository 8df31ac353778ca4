"""The tokenizer: SQL text -> a list of Token."""

from dataclasses import dataclass

from .errors import TokenizeError

KEYWORDS = frozenset("""
SELECT DISTINCT FROM WHERE GROUP BY HAVING ORDER ASC DESC LIMIT OFFSET AS AND OR NOT NULL IS IN LIKE BETWEEN
JOIN INNER LEFT OUTER ON TRUE FALSE
""".split())

SYMBOLS = ("<>", "!=", "<=", ">=", "||", "=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ",", ".")


@dataclass(frozen=True)
class Token:
    kind: str
    """KEYWORD, IDENT, NUMBER, STRING, SYMBOL or END."""
    text: str
    position: int
    value: object = None


def tokenize(text):
    tokens = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        start = i
        if ch.isalpha() or ch == "_":
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            word = text[start:i]
            if word.upper() in KEYWORDS:
                tokens.append(Token("KEYWORD", word.upper(), start))
            else:
                tokens.append(Token("IDENT", word, start, word))
            continue
        if ch == '"':
            end = text.find('"', i + 1)
            if end < 0:
                raise TokenizeError(text, start, "unterminated quoted name")
            tokens.append(Token("IDENT", text[start:end + 1], start, text[start + 1:end]))
            i = end + 1
            continue
        if ch.isdigit() or (ch == "." and i + 1 < n and text[i + 1].isdigit()):
            seen_dot = False
            while i < n and (text[i].isdigit() or (text[i] == "." and not seen_dot)):
                seen_dot = seen_dot or text[i] == "."
                i += 1
            literal = text[start:i]
            tokens.append(Token("NUMBER", literal, start, float(literal) if seen_dot else int(literal)))
            continue
        if ch == "'":
            parts = []
            i += 1
            while True:
                if i >= n:
                    raise TokenizeError(text, start, "unterminated string")
                if text[i] == "'":
                    if i + 1 < n and text[i + 1] == "'":
                        parts.append("'")
                        i += 2
                        continue
                    i += 1
                    break
                parts.append(text[i])
                i += 1
            tokens.append(Token("STRING", text[start:i], start, "".join(parts)))
            continue
        for symbol in SYMBOLS:
            if text.startswith(symbol, i):
                tokens.append(Token("SYMBOL", "<>" if symbol == "!=" else symbol, start))
                i += len(symbol)
                break
        else:
            raise TokenizeError(text, start, f"unexpected character {ch!r}")
    tokens.append(Token("END", "", n))
    return tokens
