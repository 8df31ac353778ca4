"""Building and repairing C and Python projects (make, pip install, failing test suites)."""

from __future__ import annotations

import io
import tarfile

from _spec import Spec

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
        limits={"agent_timeout_s": 900, "test_timeout_s": 300},
    ),
    Spec(
        task_id="install-wordfreq-release",
        title="Build and install a C tool from its release tarball",
        difficulty="hard",
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
        guards=["test_release_tarball_unchanged"],
        solution=_WF_SOLUTION,
        dev_tools=True,
        tags=["c", "make", "tarball", "install", "binary-fixture"],
        limits={"agent_timeout_s": 1200, "test_timeout_s": 300},
    ),
]
