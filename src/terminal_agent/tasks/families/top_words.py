"""Family ``top-words``: the N most frequent words of a text, with their counts.

easy: lower-case words separated by spaces.
medium: mixed case and punctuation; words are counted case-insensitively (``The`` = ``the``).
The counts are drawn so that the top N are strictly ordered and nothing ties at the cut.
"""

from __future__ import annotations

import random

from terminal_agent.tasks.families.base import (
    SHA256_HELPER,
    Difficulty,
    InstanceParts,
    TaskFamily,
    sha256_text,
    test_module,
)

TOP_N = tuple(str(n) for n in range(3, 15))
VOCABULARY = (
    "river", "stone", "cloud", "lamp", "forest", "tiger", "window", "garden", "engine", "pepper", "violin",
    "harbor", "meadow", "candle", "rocket", "marble", "falcon", "copper", "willow", "anchor", "bridge",
    "lantern", "orchid", "saddle", "thunder", "walnut", "island", "mirror", "ribbon", "comet",
)


TESTS = SHA256_HELPER + '''

def _pairs():
    lines = [line.split() for line in Path("/app/top.txt").read_text().splitlines() if line.strip()]
    return [(int(count), word) for count, word in lines]


def test_format_is_count_then_word():
    pairs = _pairs()
    assert pairs and len(pairs) == len(EXPECTED)


def test_most_frequent_word_first():
    assert _pairs()[0] == tuple(EXPECTED[0])


def test_all_words_and_counts():
    assert _pairs() == [tuple(pair) for pair in EXPECTED]


def test_guard_text_unchanged():
    assert sha256_of("/app/text.txt") == TEXT_SHA256
'''


class TopWords(TaskFamily):
    name = "top-words"
    summary = "List the N most frequent words of a text with their counts, most frequent first."
    keys = TOP_N
    key_meaning = "N, how many words are listed"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        n = int(key)
        medium = difficulty == "medium"
        words = rng.sample(VOCABULARY, n + 6)
        top_counts = sorted(rng.sample(range(8, 8 + 4 * n), n), reverse=True)
        counts = dict(zip(words[:n], top_counts))
        for word in words[n:]:
            counts[word] = rng.randrange(1, top_counts[-1])  # strictly below the cut
        tokens = [word for word, count in counts.items() for _ in range(count)]
        rng.shuffle(tokens)
        if medium:
            shown = []
            for token in tokens:
                token = token.capitalize() if rng.random() < 0.2 else token.upper() if rng.random() < 0.05 else token
                shown.append(token + rng.choice(["", "", "", ",", ".", ";", "!"]))
            tokens = shown
        lines = [" ".join(tokens[i : i + 12]) for i in range(0, len(tokens), 12)]
        text = "\n".join(lines) + "\n"
        expected = [[count, word] for word, count in list(counts.items())[:n]]
        pipeline = "tr ' ' '\\n' < /app/text.txt"
        if medium:
            pipeline = "tr -cs 'A-Za-z' '\\n' < /app/text.txt | tr 'A-Z' 'a-z'"
            instruction = (
                f"Find the {n} most frequent words of /app/text.txt. Words are runs of letters; count them without "
                "regard to case (write them in lower case) and ignore punctuation. Write one line per word to "
                f"/app/top.txt, 'COUNT WORD', most frequent first ({n} lines)."
            )
        else:
            instruction = (
                f"Write the {n} most common words of /app/text.txt to /app/top.txt, one per line as 'COUNT WORD', "
                "most common first."
            )
        solution = (
            "#!/bin/bash\n"
            f"{pipeline} | grep -v '^$' | sort | uniq -c | sort -rn | head -n {n} | awk '{{print $1, $2}}' > /app/top.txt\n"
        )
        tests = test_module({"EXPECTED": expected, "TEXT_SHA256": sha256_text(text)}, TESTS)
        return InstanceParts(
            title=f"Top {n} words",
            instruction=instruction,
            category="text-processing",
            test_source=tests,
            test_weights={
                "test_format_is_count_then_word": 0.5,
                "test_most_frequent_word_first": 1.0,
                "test_all_words_and_counts": 2.0,
            },
            guards=["test_guard_text_unchanged"],
            outputs=["/app/top.txt"],
            solution=solution,
            files={"text.txt": text},
            tags=["sort", "uniq", "words"],
            parameters={"words": len(counts), "tokens": sum(counts.values())},
        )
