"""Building and repairing C and Python projects (make, pip install, failing test suites)."""

from __future__ import annotations

import io
import tarfile

from _spec import NegativeSolution, Spec

# --------------------------------------------------------------------------------------------------------------
# repair-c-tally-build: a small C tool whose build fails twice (link, multiple definition) and whose sort is wrong.

_TALLY_MAKEFILE = """CC ?= gcc
CFLAGS = -Wall -Wextra -O2 -Iinclude
OBJS = src/main.o src/stats.o

tally: $(OBJS)
\t$(CC) $(CFLAGS) -o $@ $(OBJS) -lm

src/%.o: src/%.c include/tally.h
\t$(CC) $(CFLAGS) -c -o $@ $<

test: tally
\tsh tests/run.sh

clean:
\trm -f src/*.o tally

.PHONY: test clean
"""

_TALLY_H = r"""#ifndef TALLY_H
#define TALLY_H

#include <stddef.h>

/* Set by -v: print progress to stderr. */
int tally_verbose;

typedef struct {
    size_t count;
    double min, max, mean, median;
} summary;

/* 1: a number was read into *out; 0: blank or comment line; -1: not a number. */
int parse_line(const char *line, double *out);

/* 0 on success, -1 when n is 0 or memory runs out. */
int summarize(const double *values, size_t n, summary *out);

#endif
"""

_TALLY_PARSE = r"""#include <ctype.h>
#include <stdlib.h>

#include "tally.h"

int parse_line(const char *line, double *out)
{
    while (isspace((unsigned char)*line))
        line++;
    if (*line == '\0' || *line == '#')
        return 0;
    char *end;
    double value = strtod(line, &end);
    if (end == line)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0' && *end != '#')
        return -1;
    *out = value;
    return 1;
}
"""

_TALLY_STATS = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally.h"

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (int)(x - y);
}

int summarize(const double *values, size_t n, summary *out)
{
    if (n == 0)
        return -1;
    double *sorted = malloc(n * sizeof *sorted);
    if (sorted == NULL)
        return -1;
    memcpy(sorted, values, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, by_value);
    double sum = 0;
    out->min = out->max = values[0];
    for (size_t i = 0; i < n; i++) {
        sum += values[i];
        if (values[i] < out->min)
            out->min = values[i];
        if (values[i] > out->max)
            out->max = values[i];
    }
    out->count = n;
    out->mean = sum / n;
    out->median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    if (tally_verbose)
        fprintf(stderr, "tally: summarized %zu values\n", n);
    free(sorted);
    return 0;
}
"""

_TALLY_MAIN = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally.h"

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-v") == 0)
            tally_verbose = 1;
    size_t n = 0, cap = 64, lineno = 0;
    double *values = malloc(cap * sizeof *values);
    char line[4096];
    if (values == NULL)
        return 1;
    while (fgets(line, sizeof line, stdin)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        double value;
        int r = parse_line(line, &value);
        if (r < 0) {
            fprintf(stderr, "error: line %zu: bad number\n", lineno);
            return 2;
        }
        if (r == 0)
            continue;
        if (n == cap) {
            cap *= 2;
            values = realloc(values, cap * sizeof *values);
            if (values == NULL)
                return 1;
        }
        values[n++] = value;
    }
    summary s;
    if (summarize(values, n, &s) != 0) {
        fprintf(stderr, "error: no numbers\n");
        return 1;
    }
    printf("count %zu\nmin %.2f\nmax %.2f\nmean %.2f\nmedian %.2f\n", s.count, s.min, s.max, s.mean, s.median);
    free(values);
    return 0;
}
"""

_TALLY_RUN = r"""#!/bin/sh
# The project's test suite: every tests/cases/NAME.in must give tests/cases/NAME.out.
cd "$(dirname "$0")/.." || exit 1
failed=0
for input in tests/cases/*.in; do
    expected="${input%.in}.out"
    if ./tally < "$input" | cmp -s - "$expected"; then
        echo "ok   $input"
    else
        echo "FAIL $input"
        failed=1
    fi
done
exit $failed
"""

_TALLY_FILES = {
    "tally/Makefile": _TALLY_MAKEFILE,
    "tally/include/tally.h": _TALLY_H,
    "tally/src/parse.c": _TALLY_PARSE,
    "tally/src/stats.c": _TALLY_STATS,
    "tally/src/main.c": _TALLY_MAIN,
    "tally/tests/run.sh": _TALLY_RUN,
    "tally/tests/cases/ints.in": "5\n3\n9\n1\n",
    "tally/tests/cases/ints.out": "count 4\nmin 1.00\nmax 9.00\nmean 4.50\nmedian 4.00\n",
    "tally/tests/cases/fractions.in": "# readings\n0.5\n0.2\n0.9\n\n0.4   # late\n0.1\n",
    "tally/tests/cases/fractions.out": "count 5\nmin 0.10\nmax 0.90\nmean 0.42\nmedian 0.40\n",
}

_TALLY_TESTS = r'''
import random
import statistics


def _build():
    run("make", "-C", "/app/tally", "clean", timeout=60)
    return run("make", "-C", "/app/tally", timeout=120)


def _expected(values):
    mean = sum(values) / len(values)
    return (f"count {len(values)}\nmin {min(values):.2f}\nmax {max(values):.2f}\n"
            f"mean {mean:.2f}\nmedian {statistics.median(values):.2f}\n")


def _tally(text):
    return run("/app/tally/tally", input=text, timeout=30)


def test_project_builds():
    result = _build()
    assert result.returncode == 0, result.stdout + result.stderr
    assert os.access("/app/tally/tally", os.X_OK)


def test_whole_numbers():
    _build()
    rng = random.Random(7)
    values = [float(rng.randrange(-500, 500)) for _ in range(301)]
    result = _tally("".join(f"{int(v)}\n" for v in values))
    assert result.returncode == 0, result.stderr
    assert result.stdout == _expected(values)


def test_fractional_median():
    _build()
    rng = random.Random(11)
    for size in (40, 41):
        values = [round(rng.uniform(0, 3), 3) for _ in range(size)]
        result = _tally("".join(f"{v}\n" for v in values))
        assert result.returncode == 0, result.stderr
        assert result.stdout == _expected(values)


def test_bad_line_is_reported():
    _build()
    result = _tally("1\n2\n# note\nthree\n4\n")
    assert result.returncode == 2
    assert "line 4" in result.stderr
    ok = _tally("  7  # seven\n\n2\n")
    assert ok.returncode == 0 and ok.stdout.startswith("count 2\n")


def test_make_test_passes():
    _build()
    result = run("make", "-C", "/app/tally", "test", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   tests/cases/fractions.in" in result.stdout


def test_suite_unchanged():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/tally/tests/"):
            assert unchanged(path), path
'''

_TALLY_SOLUTION = r"""
cd /app/tally
# 1. parse.o was never linked.
sed -i 's|^OBJS = src/main.o src/stats.o$|OBJS = src/main.o src/parse.o src/stats.o|' Makefile
# 2. A definition in a header is defined again in every file that includes it (gcc >= 10 uses -fno-common).
sed -i 's|^int tally_verbose;|extern int tally_verbose;|' include/tally.h
sed -i 's|^int main(int argc, char \*\*argv)$|int tally_verbose;\n\nint main(int argc, char **argv)|' src/main.c
# 3. (int)(x - y) calls 0.5 and 0.2 equal: compare instead of subtracting.
sed -i 's|    return (int)(x - y);|    return (x > y) - (x < y);|' src/stats.c
make clean && make && make test
"""

# --------------------------------------------------------------------------------------------------------------
# install-wordfreq-release: a release tarball (binary fixture) whose build and install are broken.

_WF_MAKEFILE = """VERSION = 1.1
PREFIX ?= /usr/local
CC ?= gcc
CFLAGS = -std=c99 -Wall -Werror -O2 -DVERSION='"$(VERSION)"'

wordfreq: src/wordfreq.o src/table.o
\t$(CC) $(CFLAGS) -o $@ src/wordfreq.o src/table.o

src/%.o: src/%.c src/table.h
\t$(CC) $(CFLAGS) -c -o $@ $<

install: wordfreq
\tinstall -m 755 wordfreq $(PREFIX)/bin
\tinstall -m 644 man/wordfreq.1 $(PREFIX)/share/man/man1

clean:
\trm -f src/*.o wordfreq

.PHONY: install clean
"""

_WF_TABLE_H = r"""#ifndef TABLE_H
#define TABLE_H

#include <stddef.h>

typedef struct entry {
    char *word;
    long count;
    struct entry *next;
} entry;

typedef struct {
    entry **buckets;
    size_t nbuckets;
    size_t size;
} table;

table *table_new(size_t nbuckets);
void table_add(table *t, const char *word);
/* A malloc'd array of the table's entries (t->size of them). */
entry **table_entries(const table *t);

#endif
"""

_WF_TABLE_C = r"""#include <stdlib.h>
#include <string.h>

#include "table.h"

static size_t hash(const char *s)
{
    size_t h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

table *table_new(size_t nbuckets)
{
    table *t = malloc(sizeof *t);
    t->buckets = calloc(nbuckets, sizeof *t->buckets);
    t->nbuckets = nbuckets;
    t->size = 0;
    return t;
}

void table_add(table *t, const char *word)
{
    size_t b = hash(word) % t->nbuckets;
    for (entry *e = t->buckets[b]; e != NULL; e = e->next) {
        if (strcmp(e->word, word) == 0) {
            e->count++;
            return;
        }
    }
    entry *e = malloc(sizeof *e);
    e->word = strdup(word);
    e->count = 1;
    e->next = t->buckets[b];
    t->buckets[b] = e;
    t->size++;
}

entry **table_entries(const table *t)
{
    entry **all = malloc((t->size + 1) * sizeof *all);
    size_t n = 0;
    for (size_t b = 0; b < t->nbuckets; b++)
        for (entry *e = t->buckets[b]; e != NULL; e = e->next)
            all[n++] = e;
    return all;
}
"""

_WF_MAIN_C = r"""#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

static int by_count(const void *a, const void *b)
{
    const entry *x = *(entry *const *)a;
    const entry *y = *(entry *const *)b;
    return (y->count > x->count) - (y->count < x->count);
}

static void count_words(FILE *in, table *t)
{
    char word[256];
    size_t len = 0;
    int c;
    while ((c = fgetc(in)) != EOF) {
        if (isalpha(c) && c < 128) {
            if (len < sizeof word - 1)
                word[len++] = (char)tolower(c);
        } else if (len > 0) {
            word[len] = '\0';
            table_add(t, word);
            len = 0;
        }
    }
    if (len > 0) {
        word[len] = '\0';
        table_add(t, word);
    }
}

int main(int argc, char **argv)
{
    long top = 10;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("wordfreq %s\n", VERSION);
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "-n") == 0) {
        top = atol(argv[2]);
        first = 3;
    }
    table *t = table_new(4096);
    if (first >= argc) {
        count_words(stdin, t);
    } else {
        for (int i = first; i < argc; i++) {
            FILE *in = fopen(argv[i], "r");
            if (in == NULL) {
                fprintf(stderr, "wordfreq: cannot open %s\n", argv[i]);
                return 1;
            }
            count_words(in, t);
            fclose(in);
        }
    }
    entry **all = table_entries(t);
    qsort(all, t->size, sizeof *all, by_count);
    for (size_t i = 0; i < t->size && (long)i < top; i++)
        printf("%ld %s\n", all[i]->count, all[i]->word);
    return 0;
}
"""

_WF_MAN = r""".TH WORDFREQ 1 "wordfreq 1.2"
.SH NAME
wordfreq \- the most frequent words of a text
.SH SYNOPSIS
.B wordfreq
[\fB\-n\fR \fIN\fR] [\fIFILE\fR...]
.br
.B wordfreq \-\-version
.SH DESCRIPTION
Reads the FILEs (standard input when none is given) and prints the N most frequent words (10 by default),
one "COUNT WORD" line each, most frequent first. Words of equal count are listed in alphabetical order.
A word is a run of ASCII letters; case is ignored and words are printed in lower case.
"""

_WF_README = """wordfreq 1.2
============

    make
    make install PREFIX=/some/prefix

Changes in 1.2: ties are listed alphabetically (see the man page).
"""


def _tarball(root: str, members: dict[str, str]) -> bytes:
    """A reproducible .tar.gz of ``members`` under ``root/`` (fixed owner, mode and times)."""
    buffer = io.BytesIO()
    import gzip

    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w") as tar:
            for name in sorted(members):
                data = members[name].encode()
                info = tarfile.TarInfo(f"{root}/{name}")
                info.size = len(data)
                info.mtime = 1_700_000_000
                info.mode = 0o644
                info.uname = info.gname = "release"
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


_WF_TARBALL = _tarball("wordfreq-1.2", {
    "Makefile": _WF_MAKEFILE,
    "README": _WF_README,
    "VERSION": "1.2\n",
    "man/wordfreq.1": _WF_MAN,
    "src/table.h": _WF_TABLE_H,
    "src/table.c": _WF_TABLE_C,
    "src/wordfreq.c": _WF_MAIN_C,
})

_WF_PYTHON_REWRITE = NegativeSolution(
    name="python-rewrite",
    why="a Python program installed in place of the C tool, the release neither built nor fixed",
    max_score=0.0,
    script=r"""#!/bin/bash
mkdir -p /app/prefix/bin /app/prefix/share/man/man1 /tmp/wf
tar -xzf /app/dist/wordfreq-1.2.tar.gz -C /tmp/wf
cp /tmp/wf/wordfreq-1.2/man/wordfreq.1 /app/prefix/share/man/man1/wordfreq.1
cat > /app/prefix/bin/wordfreq <<'PY'
#!/usr/bin/env python3
import re, sys
from collections import Counter
args = sys.argv[1:]
if args == ["--version"]:
    print("wordfreq 1.2"); sys.exit(0)
top = 10
if args[:1] == ["-n"]:
    top, args = int(args[1]), args[2:]
text = open(args[0]).read() if args else sys.stdin.read()
counts = Counter(w.lower() for w in re.findall(r"[A-Za-z]+", text))
for word, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
    print(count, word)
PY
chmod +x /app/prefix/bin/wordfreq
""",
)

_WF_TESTS = r'''
import random
import re
import tarfile
from collections import Counter

BIN = "/app/prefix/bin/wordfreq"


def _reference(text, top):
    counts = Counter(w.lower() for w in re.findall(r"[A-Za-z]+", text))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]
    return "".join(f"{count} {word}\n" for word, count in ranked)


def _text(seed, words=4000):
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 4))) for _ in range(300)]
    parts = []
    for _ in range(words):
        word = rng.choice(vocab)
        if rng.random() < 0.3:
            word = word.upper() if rng.random() < 0.5 else word.capitalize()
        parts.append(word + rng.choice([" ", " ", ", ", ".\n", "-", "  "]))
    return "".join(parts)


def test_installed_binary_reports_version():
    assert os.path.isfile(BIN) and os.access(BIN, os.X_OK)
    result = run(BIN, "--version")
    assert result.returncode == 0 and result.stdout == "wordfreq 1.2\n"


def test_man_page_installed():
    with tarfile.open("/app/dist/wordfreq-1.2.tar.gz") as tar:
        shipped = tar.extractfile("wordfreq-1.2/man/wordfreq.1").read()
    path = Path("/app/prefix/share/man/man1/wordfreq.1")
    assert path.is_file() and path.read_bytes() == shipped


def test_counts_of_a_fresh_text(tmp_path):
    text = _text(3)
    target = tmp_path / "t.txt"
    target.write_text(text)
    result = run(BIN, "-n", "100000", str(target), timeout=30)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == sorted(_reference(text, 100000).splitlines())


def test_ties_are_alphabetical():
    text = _text(9)
    result = run(BIN, "-n", "40", input=text, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout == _reference(text, 40)
    small = run(BIN, input="pear Apple fig apple fig PEAR kiwi\n")
    assert small.stdout == "2 apple\n2 fig\n2 pear\n1 kiwi\n"


def test_release_tarball_unchanged():
    assert unchanged("/app/dist/wordfreq-1.2.tar.gz")


def test_guard_installed_program_is_the_built_c_tool():
    """A program in another language put at the install path (a Python stand-in) is not the release built."""
    if not os.path.isfile(BIN):
        return  # nothing installed: the paying tests fail on their own
    data = Path(BIN).read_bytes()
    assert data[:4] == b"\x7fELF", "the installed wordfreq is not a compiled program"
    assert b"wordfreq" in data
'''

_WF_SOLUTION = r"""
set -e
mkdir -p /app/build && cd /app/build
tar xzf /app/dist/wordfreq-1.2.tar.gz
cd wordfreq-1.2
# The version is 1.2; strdup is POSIX, not C99 (an implicit declaration is an error under -Werror).
sed -i 's/^VERSION = 1.1$/VERSION = 1.2/; s/-std=c99/-std=c99 -D_POSIX_C_SOURCE=200809L/' Makefile
# install into a missing folder creates a FILE named bin: create the folders, name the targets.
python3 - <<'EOF'
from pathlib import Path
path = Path("Makefile")
text = path.read_text()
text = text.replace("\tinstall -m 755 wordfreq $(PREFIX)/bin\n",
                    "\tinstall -d $(PREFIX)/bin $(PREFIX)/share/man/man1\n\tinstall -m 755 wordfreq $(PREFIX)/bin/wordfreq\n")
text = text.replace("\tinstall -m 644 man/wordfreq.1 $(PREFIX)/share/man/man1\n",
                    "\tinstall -m 644 man/wordfreq.1 $(PREFIX)/share/man/man1/wordfreq.1\n")
path.write_text(text)
EOF
# Ties in alphabetical order, as the man page says.
python3 - <<'EOF'
from pathlib import Path
path = Path("src/wordfreq.c")
source = path.read_text()
old = "    return (y->count > x->count) - (y->count < x->count);\n"
new = ("    if (x->count != y->count)\n        return (y->count > x->count) - (y->count < x->count);\n"
       "    return strcmp(x->word, y->word);\n")
path.write_text(source.replace(old, new))
EOF
make clean && make
make install PREFIX=/app/prefix
/app/prefix/bin/wordfreq --version
"""

# --------------------------------------------------------------------------------------------------------------
# repair-invoicing-suite: a Python package whose unittest suite fails in four modules.

_INV_INIT = '"""Invoice arithmetic: money, invoice lines, tax rates and totals."""\n'

_INV_MONEY = '''from decimal import Decimal

CENT = Decimal("0.01")


def to_money(value):
    """``value`` (str, int or Decimal) as a Decimal rounded to cents, halves away from zero."""
    return Decimal(round(float(value), 2))


def format_money(amount):
    """``1,234.50``: thousands separators, two decimals, ``-`` in front of negative amounts."""
    return f"{to_money(amount):,.2f}"
'''

_INV_LINES = '''from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Line:
    sku: str
    category: str
    quantity: int
    unit_price: Decimal
    discount: Decimal
    """A fraction: 0.15 for 15%."""


def parse_line(text):
    """``SKU;category;quantity;unit price;discount`` as a :class:`Line`.

    The quantity may use thousands separators (``1,200``); the discount is a percentage (``15%``, ``2.5%``)
    or empty for none. Fields may have spaces around them. A malformed line raises ValueError.
    """
    parts = [part.strip() for part in text.split(";")]
    if len(parts) != 5:
        raise ValueError(f"expected 5 fields: {text!r}")
    sku, category, quantity, price, discount = parts
    return Line(
        sku=sku,
        category=category.lower(),
        quantity=int(quantity),
        unit_price=Decimal(price),
        discount=Decimal(discount.rstrip("%")) / 10 if discount else Decimal(0),
    )


def parse_lines(text):
    """Every non-blank line of ``text`` that is not a ``#`` comment, parsed."""
    return [parse_line(line) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
'''

_INV_TAX = '''from decimal import Decimal

RATES = {"north": Decimal("0.20"), "south": Decimal("0.10"), "islands": Decimal("0.05")}
EXEMPT = {"books", "food"}


def rate_for(region, category):
    """The tax rate of ``category`` in ``region``.

    Region names are case-insensitive and spaces around them are ignored; exempt categories pay 0;
    an unknown region raises KeyError.
    """
    if category in EXEMPT:
        return Decimal(0)
    return RATES[region]
'''

_INV_TOTALS = '''from decimal import Decimal

from invoicing.money import to_money
from invoicing.tax import rate_for


def line_net(line):
    """quantity * unit price, rounded, minus the line's discount, rounded again."""
    gross = to_money(line.quantity * line.unit_price)
    return to_money(gross * (1 - line.discount))


def invoice(lines, region):
    """``{"subtotal", "tax", "total"}``: the sum of the lines' nets, the sum of each line's tax on its net
    (rounded per line), and their sum."""
    subtotal = Decimal(0)
    tax = Decimal(0)
    for line in lines:
        gross = to_money(line.quantity * line.unit_price)
        subtotal += line_net(line)
        tax += to_money(gross * rate_for(region, line.category))
    return {"subtotal": subtotal, "tax": tax, "total": subtotal + tax}
'''

_INV_SUITE = {
    "test_money.py": '''import unittest
from decimal import Decimal

from invoicing.money import format_money, to_money


class MoneyTest(unittest.TestCase):
    def test_rounds_half_away_from_zero(self):
        self.assertEqual(to_money("2.675"), Decimal("2.68"))
        self.assertEqual(to_money("0.125"), Decimal("0.13"))

    def test_exact_cents(self):
        self.assertEqual(str(to_money("19.99")), "19.99")
        self.assertEqual(str(to_money(3)), "3.00")

    def test_format(self):
        self.assertEqual(format_money(Decimal("1234.5")), "1,234.50")


if __name__ == "__main__":
    unittest.main()
''',
    "test_lines.py": '''import unittest
from decimal import Decimal

from invoicing.lines import parse_line, parse_lines


class LinesTest(unittest.TestCase):
    def test_simple_line(self):
        line = parse_line("A-1;Tools;3;4.50;")
        self.assertEqual((line.sku, line.category, line.quantity), ("A-1", "tools", 3))
        self.assertEqual(line.unit_price, Decimal("4.50"))
        self.assertEqual(line.discount, Decimal(0))

    def test_discount_percent(self):
        self.assertEqual(parse_line("B;tools;1;10;15%").discount, Decimal("0.15"))

    def test_thousands_in_quantity(self):
        self.assertEqual(parse_line(" C ; food ; 1,200 ; 0.99 ; ").quantity, 1200)

    def test_comments_and_blanks(self):
        self.assertEqual(len(parse_lines("# header\\n\\nA;x;1;1;\\n")), 1)

    def test_malformed(self):
        with self.assertRaises(ValueError):
            parse_line("A;x;1")


if __name__ == "__main__":
    unittest.main()
''',
    "test_tax.py": '''import unittest
from decimal import Decimal

from invoicing.tax import rate_for


class TaxTest(unittest.TestCase):
    def test_known_region(self):
        self.assertEqual(rate_for("north", "tools"), Decimal("0.20"))

    def test_region_case_and_spaces(self):
        self.assertEqual(rate_for(" South ", "tools"), Decimal("0.10"))

    def test_exempt(self):
        self.assertEqual(rate_for("north", "books"), Decimal(0))

    def test_unknown_region(self):
        with self.assertRaises(KeyError):
            rate_for("east", "tools")


if __name__ == "__main__":
    unittest.main()
''',
    "test_totals.py": '''import unittest
from decimal import Decimal

from invoicing.lines import parse_lines
from invoicing.totals import invoice


class TotalsTest(unittest.TestCase):
    def test_invoice_with_discount(self):
        lines = parse_lines("A;tools;2;50.00;10%\\nB;books;1;20.00;\\n")
        result = invoice(lines, "north")
        self.assertEqual(result["subtotal"], Decimal("110.00"))
        self.assertEqual(result["tax"], Decimal("18.00"))
        self.assertEqual(result["total"], Decimal("128.00"))


if __name__ == "__main__":
    unittest.main()
''',
}

_INV_FILES = {
    "invoicing/invoicing/__init__.py": _INV_INIT,
    "invoicing/invoicing/money.py": _INV_MONEY,
    "invoicing/invoicing/lines.py": _INV_LINES,
    "invoicing/invoicing/tax.py": _INV_TAX,
    "invoicing/invoicing/totals.py": _INV_TOTALS,
    "invoicing/tests/__init__.py": "",
    **{f"invoicing/tests/{name}": text for name, text in _INV_SUITE.items()},
    "invoicing/README.md": "Run the test suite from this folder: `python3 -m unittest discover -s tests -t .`\n",
}

_INV_CHECK = r'''
import json, random, sys
from decimal import Decimal, ROUND_HALF_UP
sys.path.insert(0, "/app/invoicing")
from invoicing.money import to_money, format_money
from invoicing.lines import parse_lines
from invoicing.tax import rate_for
from invoicing.totals import invoice

def m(v):
    return Decimal(str(v)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)

out = {}
out["neg"] = str(to_money("-2.675"))
out["fmt"] = format_money(Decimal("-1234567.005"))
out["rate"] = str(rate_for("ISLANDS\t", "tools"))
rng = random.Random(int(sys.argv[1]))
rows, subtotal, tax = [], Decimal(0), Decimal(0)
region = rng.choice(["north", "South", " islands "])
rates = {"north": Decimal("0.20"), "south": Decimal("0.10"), "islands": Decimal("0.05")}
for i in range(60):
    qty = rng.randint(1, 5000)
    price = Decimal(rng.randint(1, 99999)) / 100
    disc = rng.choice(["", "5%", "12.5%", "33%"])
    cat = rng.choice(["tools", "books", "food", "toys"])
    qty_text = f"{qty:,}" if rng.random() < 0.5 else str(qty)
    rows.append(f"S{i};{cat.upper() if i % 7 == 0 else cat};{qty_text};{price};{disc}")
    gross = m(qty * price)
    net = m(gross * (1 - (Decimal(disc[:-1]) / 100 if disc else 0)))
    subtotal += net
    tax += m(net * (0 if cat in ("books", "food") else rates[region.strip().lower()]))
got = invoice(parse_lines("\n".join(rows)), region)
out["invoice_ok"] = got == {"subtotal": subtotal, "tax": tax, "total": subtotal + tax}
out["invoice"] = {k: str(v) for k, v in got.items()}
print(json.dumps(out))
'''

_INV_TESTS = r'''
import shutil
import sys

CHECK = CHECK_SOURCE


def _suite(tmp_path, name):
    # The pristine suite (a copy beside these tests), run against the package in /app/invoicing.
    folder = tmp_path / "suite"
    folder.mkdir()
    shutil.copy(Path(__file__).parent / "suite" / f"{name[:-3]}.unittest", folder / name)
    env = dict(os.environ, PYTHONPATH="/app/invoicing")
    result = subprocess.run([sys.executable, "-m", "unittest", "-v", name[:-3]], cwd=folder, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    assert " ok" in result.stderr


def test_money_suite(tmp_path):
    _suite(tmp_path, "test_money.py")


def test_lines_suite(tmp_path):
    _suite(tmp_path, "test_lines.py")


def test_tax_suite(tmp_path):
    _suite(tmp_path, "test_tax.py")


def test_totals_suite(tmp_path):
    _suite(tmp_path, "test_totals.py")


def test_fresh_invoices_and_edge_cases():
    for seed in (1, 2):
        result = run(sys.executable, "-c", CHECK, str(seed), timeout=60)
        assert result.returncode == 0, result.stderr[-3000:]
        out = json.loads(result.stdout)
        assert out["neg"] == "-2.68"
        assert out["fmt"] == "-1,234,567.01"
        assert out["rate"] == "0.05"
        assert out["invoice_ok"], out["invoice"]


def test_suite_unchanged():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/invoicing/tests/"):
            assert unchanged(path), path
'''.replace("CHECK_SOURCE", repr(_INV_CHECK))

_INV_SOLUTION = r"""
cd /app/invoicing
python3 - <<'EOF'
from pathlib import Path

def patch(path, old, new):
    p = Path(path)
    text = p.read_text()
    assert old in text, (path, old)
    p.write_text(text.replace(old, new))

# Floats cannot hold 2.675 and round() rounds half to even: quantize the exact decimal, halves up.
patch("invoicing/money.py", "from decimal import Decimal\n", "from decimal import ROUND_HALF_UP, Decimal\n")
patch("invoicing/money.py", "    return Decimal(round(float(value), 2))\n",
      "    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)\n")
# Thousands separators, and a percentage is a hundredth.
patch("invoicing/lines.py", "quantity=int(quantity),", 'quantity=int(quantity.replace(",", "")),')
patch("invoicing/lines.py", '/ 10 if discount', '/ 100 if discount')
# Region names: case and spaces do not matter.
patch("invoicing/tax.py", "    if category in EXEMPT:", "    region = region.strip().lower()\n    if category.lower() in EXEMPT:")
# Tax is due on the discounted net, not on the gross.
patch("invoicing/totals.py",
      "        gross = to_money(line.quantity * line.unit_price)\n        subtotal += line_net(line)\n"
      "        tax += to_money(gross * rate_for(region, line.category))\n",
      "        net = line_net(line)\n        subtotal += net\n        tax += to_money(net * rate_for(region, line.category))\n")
EOF
python3 -m unittest discover -s tests -t .
"""

# --------------------------------------------------------------------------------------------------------------
# install-geo-tools-venv: two local setup.py projects, one depending on the other, into a virtual environment.

_GEO_CORE_SETUP = '''from setuptools import setup

setup(
    name="geo-core",
    version="1.0.0",
    description="Great-circle distances",
    packages=["geo_core"],
)
'''

_GEO_CORE_INIT = '''"""Distances on the Earth's surface."""

import math

from geo_core.units import km_to_miles  # noqa: F401

EARTH_RADIUS_KM = 6371.0088


def haversine(lat1, lon1, lat2, lon2):
    """Great-circle distance in km between two points given in degrees."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(a))
'''

_GEO_CORE_UNITS = '''KM_PER_MILE = 1.609344


def km_to_miles(km):
    return km / KM_PER_MILE
'''

_GEO_CLI_SETUP = '''from setuptools import find_packages, setup

setup(
    name="geo-cli",
    version="0.4.0",
    description="geodist: the distance between two points",
    packages=find_packages(),
    install_requires=["geo-core>=1.0"],
    entry_points={"console_scripts": ["geodist=geo_cli.main:run"]},
)
'''

_GEO_CLI_CLI = '''"""geodist LAT1 LON1 LAT2 LON2 [--miles]: print the great-circle distance, one decimal."""

import argparse

from geocore import haversine, km_to_miles


def main(argv=None):
    parser = argparse.ArgumentParser(prog="geodist")
    for name in ("lat1", "lon1", "lat2", "lon2"):
        parser.add_argument(name, type=float)
    parser.add_argument("--miles", action="store_true")
    args = parser.parse_args(argv)
    km = haversine(args.lat1, args.lon1, args.lat2, args.lon2)
    if args.miles:
        print(f"{km_to_miles(km):.1f} mi")
    else:
        print(f"{km:.1f} km")
    return 0
'''

_GEO_FILES = {
    "projects/geo-core/setup.py": _GEO_CORE_SETUP,
    "projects/geo-core/src/geo_core/__init__.py": _GEO_CORE_INIT,
    "projects/geo-core/src/geo_core/units.py": _GEO_CORE_UNITS,
    "projects/geo-cli/setup.py": _GEO_CLI_SETUP,
    "projects/geo-cli/geo_cli/__init__.py": "",
    "projects/geo-cli/geo_cli/cli.py": _GEO_CLI_CLI,
}

_GEO_TESTS = r'''
import math
import random

VENV = "/app/venv"


def _km(a, b, c, d):
    p1, p2 = math.radians(a), math.radians(c)
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(d - b) / 2) ** 2
    return 2 * 6371.0088 * math.asin(math.sqrt(h))


def _geodist(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([f"{VENV}/bin/geodist", *map(str, args)], capture_output=True, text=True, timeout=30,
                          cwd="/", env=env)


def test_both_projects_in_the_venv():
    result = run(f"{VENV}/bin/python", "-c",
                 "import importlib.metadata as m, geo_core, geo_cli; print(m.version('geo-core'), m.version('geo-cli'))",
                 cwd="/")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1.0.0", "0.4.0"]
    system = run("/usr/bin/python3", "-c", "import geo_core", cwd="/")
    assert system.returncode != 0, "geo_core must be installed in the venv, not system-wide"


def test_geodist_km():
    rng = random.Random(4)
    for _ in range(5):
        a, b, c, d = (round(rng.uniform(-80, 80), 4), round(rng.uniform(-170, 170), 4),
                      round(rng.uniform(-80, 80), 4), round(rng.uniform(-170, 170), 4))
        result = _geodist(a, b, c, d)
        assert result.returncode == 0, result.stderr
        assert result.stdout == f"{_km(a, b, c, d):.1f} km\n"


def test_geodist_miles():
    result = _geodist(52.52, 13.405, 48.8566, 2.3522, "--miles")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{_km(52.52, 13.405, 48.8566, 2.3522) / 1.609344:.1f} mi\n"


def test_installed_not_linked_to_sources():
    # A regular install: the packages' code lives in the venv, not in /app/projects (no editable link).
    code = "import geo_core, geo_cli.cli; print(geo_core.__file__); print(geo_cli.cli.__file__)"
    result = run(f"{VENV}/bin/python", "-c", code, cwd="/")
    assert result.returncode == 0, result.stderr
    files = result.stdout.split()
    assert len(files) == 2 and all(f.startswith(f"{VENV}/lib/") for f in files), files
    links = run("sh", "-c", f"grep -rl /app/projects {VENV}/lib/python3*/site-packages --include=*.pth --include=*.egg-link")
    assert links.stdout.strip() == "", links.stdout
'''

_GEO_SOLUTION = r"""
set -e
cd /app/projects
# geo-core keeps its package under src/.
sed -i 's|    packages=\["geo_core"\],|    package_dir={"": "src"},\n    packages=["geo_core"],|' geo-core/setup.py
# The CLI imports the package by its real name, and its entry point names the module that exists.
sed -i 's|^from geocore import|from geo_core import|' geo-cli/geo_cli/cli.py
sed -i 's|geodist=geo_cli.main:run|geodist=geo_cli.cli:main|' geo-cli/setup.py
# The venv sees the system's setuptools and wheel (nothing can be fetched here).
python3 -m venv --system-site-packages /app/venv
# geo-core is not on any index: install it first, then the CLI (regular installs, no build isolation).
/app/venv/bin/pip install --no-index --no-build-isolation ./geo-core
/app/venv/bin/pip install --no-index --no-build-isolation ./geo-cli
/app/venv/bin/geodist 52.52 13.405 48.8566 2.3522
"""

# --------------------------------------------------------------------------------------------------------------
# relocatable-shapes-install: a shared library and its program, installed as a tree that can be moved.

_SH_MAKEFILE = """PREFIX ?= /usr/local
CC = gcc
CFLAGS = -O2 -Wall -fPIC -Ilib
LIBOBJS = lib/area.o

all: libgeom.so shapes

libgeom.so: $(LIBOBJS)
\t$(CC) -shared -o $@ $(LIBOBJS) -lm

shapes: app/shapes.o libgeom.so
\t$(CC) -o $@ app/shapes.o -L. -lgeom

%.o: %.c lib/geom.h
\t$(CC) $(CFLAGS) -c -o $@ $<

install: all
\tmkdir -p $(PREFIX)/bin $(PREFIX)/lib
\tcp shapes $(PREFIX)/bin/
\tcp libgeom.so $(PREFIX)/lib/

clean:
\trm -f lib/*.o app/*.o libgeom.so* shapes

.PHONY: all install clean
"""

_SH_GEOM_H = r"""#ifndef GEOM_H
#define GEOM_H

double circle_area(double r);
double circle_perimeter(double r);
double rect_area(double w, double h);
double rect_perimeter(double w, double h);
/* Heron's formula; -1 when the sides do not make a triangle. */
double triangle_area(double a, double b, double c);
double triangle_perimeter(double a, double b, double c);

#endif
"""

_SH_AREA_C = r"""#include <math.h>

#include "geom.h"

double circle_area(double r) { return M_PI * r * r; }

double rect_area(double w, double h) { return w * h; }

double triangle_area(double a, double b, double c)
{
    if (a + b <= c || a + c <= b || b + c <= a)
        return -1;
    double s = (a + b + c) / 2;
    return sqrt(s * (s - a) * (s - b) * (s - c));
}
"""

_SH_PERIM_C = r"""#include <math.h>

#include "geom.h"

double circle_perimeter(double r) { return 2 * M_PI * r; }

double rect_perimeter(double w, double h) { return 2 * (w + h); }

double triangle_perimeter(double a, double b, double c) { return a + b + c; }
"""

_SH_MAIN_C = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geom.h"

static int usage(void)
{
    fprintf(stderr, "usage: shapes circle R | rect W H | triangle A B C\n");
    return 2;
}

int main(int argc, char **argv)
{
    double area, perimeter;
    if (argc == 3 && strcmp(argv[1], "circle") == 0) {
        double r = atof(argv[2]);
        area = circle_area(r);
        perimeter = circle_perimeter(r);
    } else if (argc == 4 && strcmp(argv[1], "rect") == 0) {
        double w = atof(argv[2]), h = atof(argv[3]);
        area = rect_area(w, h);
        perimeter = rect_perimeter(w, h);
    } else if (argc == 5 && strcmp(argv[1], "triangle") == 0) {
        double a = atof(argv[2]), b = atof(argv[3]), c = atof(argv[4]);
        area = triangle_area(a, b, c);
        if (area < 0) {
            fprintf(stderr, "shapes: invalid triangle\n");
            return 1;
        }
        perimeter = triangle_perimeter(a, b, c);
    } else {
        return usage();
    }
    printf("area %.3f perimeter %.3f\n", area, perimeter);
    return 0;
}
"""

_SH_FILES = {
    "shapes/Makefile": _SH_MAKEFILE,
    "shapes/lib/geom.h": _SH_GEOM_H,
    "shapes/lib/area.c": _SH_AREA_C,
    "shapes/lib/perimeter.c": _SH_PERIM_C,
    "shapes/app/shapes.c": _SH_MAIN_C,
}

_SH_TESTS = r'''
import glob
import math
import shutil

DIST = "/app/dist"


def _env():
    return {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}


def _shapes(root, *args):
    return subprocess.run([f"{root}/bin/shapes", *map(str, args)], capture_output=True, text=True, timeout=30,
                          cwd="/", env=_env())


def _check_outputs(root):
    result = _shapes(root, "circle", 2)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"area {math.pi * 4:.3f} perimeter {math.pi * 4:.3f}\n"
    result = _shapes(root, "rect", 3, 4.5)
    assert result.stdout == "area 13.500 perimeter 15.000\n", result.stderr
    result = _shapes(root, "triangle", 3, 4, 5)
    assert result.stdout == "area 6.000 perimeter 12.000\n", result.stderr


def test_installed_program_runs():
    _check_outputs(DIST)
    bad = _shapes(DIST, "triangle", 1, 1, 5)
    assert bad.returncode == 1 and "invalid triangle" in bad.stderr


def test_library_soname_and_links():
    real = Path(DIST, "lib", "libgeom.so.1.2.0")
    assert real.is_file() and not real.is_symlink()
    assert os.readlink(f"{DIST}/lib/libgeom.so.1") == "libgeom.so.1.2.0"
    assert os.readlink(f"{DIST}/lib/libgeom.so") == "libgeom.so.1"
    lib = run("readelf", "-d", str(real)).stdout
    assert "(SONAME)" in lib and "[libgeom.so.1]" in lib
    program = run("readelf", "-d", f"{DIST}/bin/shapes").stdout
    assert "Shared library: [libgeom.so.1]" in program
    symbols = run("nm", "-D", "--defined-only", str(real)).stdout
    assert "rect_perimeter" in symbols and "circle_area" in symbols


def test_tree_is_relocatable(tmp_path):
    moved = tmp_path / "elsewhere" / "shapes-1.2"
    shutil.copytree(DIST, moved, symlinks=True)
    os.rename(DIST, DIST + ".away")
    try:
        _check_outputs(str(moved))
        ldd = subprocess.run(["ldd", f"{moved}/bin/shapes"], capture_output=True, text=True, env=_env()).stdout
    finally:
        os.rename(DIST + ".away", DIST)
    assert "libgeom.so.1 => " + str(moved) in ldd, ldd


def test_nothing_installed_system_wide():
    found = [p for d in ("/usr/lib", "/usr/local/lib", "/lib")
             for p in glob.glob(f"{d}/**/libgeom.so*", recursive=True)]
    assert found == []
    conf = " ".join(Path(p).read_text() for p in glob.glob("/etc/ld.so.conf.d/*"))
    assert "/app" not in conf and "/app" not in Path("/etc/ld.so.conf").read_text()
'''

_SH_SOLUTION = r"""
set -e
cd /app/shapes
cat > Makefile <<'EOF'
PREFIX ?= /usr/local
CC = gcc
CFLAGS = -O2 -Wall -fPIC -Ilib
LIBOBJS = lib/area.o lib/perimeter.o
SONAME = libgeom.so.1
REAL = libgeom.so.1.2.0

all: $(REAL) shapes

$(REAL): $(LIBOBJS)
	$(CC) -shared -Wl,-soname,$(SONAME) -o $@ $(LIBOBJS) -lm
	ln -sf $(REAL) $(SONAME)
	ln -sf $(SONAME) libgeom.so

# RUNPATH relative to the program itself: the installed tree can move.
shapes: app/shapes.o $(REAL)
	$(CC) -o $@ app/shapes.o -L. -lgeom -Wl,-rpath,'$$ORIGIN/../lib'

%.o: %.c lib/geom.h
	$(CC) $(CFLAGS) -c -o $@ $<

install: all
	mkdir -p $(PREFIX)/bin $(PREFIX)/lib
	cp shapes $(PREFIX)/bin/
	cp $(REAL) $(PREFIX)/lib/
	ln -sf $(REAL) $(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(PREFIX)/lib/libgeom.so

clean:
	rm -f lib/*.o app/*.o libgeom.so* shapes

.PHONY: all install clean
EOF
make clean
make
make install PREFIX=/app/dist
env -u LD_LIBRARY_PATH /app/dist/bin/shapes circle 2
"""

TASKS: list[Spec] = [
    Spec(
        task_id="repair-c-tally-build",
        title="Repair the build and test suite of a small C tool",
        difficulty="medium",
        category="build-repair",
        instruction="""
/app/tally is a small C program: it reads numbers from standard input (one per line; blank lines and `#`
comments are skipped) and prints their count, min, max, mean and median. `make` in /app/tally should build
`/app/tally/tally` and `make test` should run the project's test suite in /app/tally/tests, but the build is
broken, and once it builds the suite does not pass either.

Fix the sources and the Makefile so that `make` builds the program and `make test` passes. Do not change
anything under /app/tally/tests: the suite is right.
""",
        files=_TALLY_FILES,
        tests=_TALLY_TESTS,
        weights={"test_project_builds": 1.0, "test_whole_numbers": 1.0, "test_fractional_median": 1.5,
                 "test_bad_line_is_reported": 0.5, "test_make_test_passes": 1.0},
        guards=["test_suite_unchanged"],
        solution=_TALLY_SOLUTION,
        dev_tools=True,
        harbor=True,
        tags=["c", "make", "linker", "build-repair"],
        limits={"agent_timeout_s": 900, "test_timeout_s": 480},
    ),
    Spec(
        task_id="install-wordfreq-release",
        title="Build and install a C tool from its release tarball",
        difficulty="medium",
        category="build-repair",
        instruction="""
/app/dist/wordfreq-1.2.tar.gz is the release tarball of `wordfreq`, a C tool that prints the most frequent
words of a text (its man page, man/wordfreq.1 in the tarball, says exactly what it must do). Build it and
install it with its own `make install` into the prefix /app/prefix, so that the program is
/app/prefix/bin/wordfreq and its man page is /app/prefix/share/man/man1/wordfreq.1.

The release does not build as shipped, its install step is wrong, and the program does not yet behave as
its man page and README say for release 1.2 (`wordfreq --version` must print `wordfreq 1.2`). Unpack it
somewhere else (for example /app/build), fix what is needed there, and install. Leave the tarball itself as
it is.
""",
        files={"dist/wordfreq-1.2.tar.gz": _WF_TARBALL},
        tests=_WF_TESTS,
        weights={"test_installed_binary_reports_version": 1.0, "test_man_page_installed": 0.5,
                 "test_counts_of_a_fresh_text": 1.5, "test_ties_are_alphabetical": 1.0},
        guards=["test_release_tarball_unchanged", "test_guard_installed_program_is_the_built_c_tool"],
        solution=_WF_SOLUTION,
        negative_solutions=[_WF_PYTHON_REWRITE],
        dev_tools=True,
        tags=["c", "make", "tarball", "install", "binary-fixture"],
        limits={"agent_timeout_s": 1200, "test_timeout_s": 300},
    ),
    Spec(
        task_id="repair-invoicing-suite",
        title="Make a Python package's failing test suite pass",
        difficulty="medium",
        category="build-repair",
        instruction="""
/app/invoicing is a small Python package (`invoicing`: money, invoice lines, tax rates, totals) with a
unittest suite in /app/invoicing/tests. Run it from /app/invoicing with
`python3 -m unittest discover -s tests -t .`: several tests fail, in more than one module.

Fix the package so that the whole suite passes. The suite and the docstrings describe the intended behaviour;
fix the causes in the package (other inputs than the suite's will be checked too), and do not edit the tests.
""",
        files=_INV_FILES,
        tests=_INV_TESTS,
        test_files={f"suite/{name[:-3]}.unittest": text for name, text in _INV_SUITE.items()},
        weights={"test_money_suite": 1.0, "test_lines_suite": 1.0, "test_tax_suite": 1.0, "test_totals_suite": 1.0,
                 "test_fresh_invoices_and_edge_cases": 1.5},
        guards=["test_suite_unchanged"],
        solution=_INV_SOLUTION,
        tags=["python", "unittest", "decimal", "multi-module"],
        limits={"agent_timeout_s": 1200, "test_timeout_s": 360},
    ),
    Spec(
        task_id="install-geo-tools-venv",
        title="Install two local Python projects into a virtual environment",
        difficulty="medium",
        category="build-repair",
        instruction="""
/app/projects holds two local Python projects: `geo-core` (a library, package `geo_core`) and `geo-cli`
(a command `geodist LAT1 LON1 LAT2 LON2 [--miles]` that prints the great-circle distance, depending on
geo-core). Neither installs or works as it is, and there is no package index here (nothing can be downloaded).

Create a virtual environment at /app/venv and install both projects into it (regular installs, not editable;
not into the system Python), so that `/app/venv/bin/geodist 52.52 13.405 48.8566 2.3522` prints `877.5 km`
from any directory. Fix the projects as needed.
""",
        files=_GEO_FILES,
        tests=_GEO_TESTS,
        weights={"test_both_projects_in_the_venv": 1.0, "test_geodist_km": 1.0, "test_geodist_miles": 0.5,
                 "test_installed_not_linked_to_sources": 1.0},
        outputs=["/app/venv/bin/geodist", "/app/venv/bin/python"],
        solution=_GEO_SOLUTION,
        tags=["python", "pip", "venv", "setuptools"],
        limits={"agent_timeout_s": 900, "test_timeout_s": 360},
    ),
    Spec(
        task_id="relocatable-shapes-install",
        title="A shared library and its program, installed as a relocatable tree",
        difficulty="medium",
        category="build-repair",
        instruction="""
/app/shapes builds a shared library `libgeom` (lib/) and a program `shapes` that uses it (app/), with a
Makefile. The build fails, and even the parts that build would not run from where they are installed.

Fix the Makefile (and whatever else is needed) so that `make install PREFIX=/app/dist` installs:
- /app/dist/bin/shapes, dynamically linked against libgeom;
- /app/dist/lib/libgeom.so.1.2.0 with the SONAME `libgeom.so.1`, plus the symlinks
  libgeom.so.1 -> libgeom.so.1.2.0 and libgeom.so -> libgeom.so.1.

/app/dist/bin/shapes must run with no LD_LIBRARY_PATH, and the whole /app/dist tree must keep working when it
is copied or moved to any other directory. Run that install. Do not install anything into system directories
or change the dynamic loader's configuration.
""",
        files=_SH_FILES,
        tests=_SH_TESTS,
        weights={"test_installed_program_runs": 1.0, "test_library_soname_and_links": 1.0,
                 "test_tree_is_relocatable": 1.5},
        guards=["test_nothing_installed_system_wide"],
        outputs=["dist/bin/shapes", "dist/lib/libgeom.so.1.2.0", "dist/lib/libgeom.so.1", "dist/lib/libgeom.so"],
        solution=_SH_SOLUTION,
        dev_tools=True,
        tags=["c", "make", "shared-library", "rpath", "linker"],
        limits={"agent_timeout_s": 1200, "test_timeout_s": 360},
    ),
]
