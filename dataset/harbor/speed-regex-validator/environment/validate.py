"""python3 validate.py FILE: check every line of FILE, `id:VALUE` or `email:VALUE`.

An id is lower-case letters and digits in groups joined by single hyphens (no hyphen at either end).
An e-mail's local part is letters and digits in groups joined by single dots or underscores, optionally
ending with one dot or underscore; the domain is one or more lower-case labels of letters and digits, each
followed by a dot, then a top-level domain of at least two lower-case letters.

Prints `LINE_NUMBER ok` or `LINE_NUMBER bad` for every line, then `ok N` and `bad N`.
"""

import re
import sys

ID_RE = re.compile(r"^([a-z0-9]+-?)*[a-z0-9]+$")
EMAIL_RE = re.compile(r"^([a-zA-Z0-9]+[._]?)+@([a-z0-9]+\.)+[a-z]{2,}$")


def valid(line):
    kind, _, value = line.partition(":")
    if kind == "id":
        return ID_RE.match(value) is not None
    if kind == "email":
        return EMAIL_RE.match(value) is not None
    return False


def main():
    good = bad = 0
    with open(sys.argv[1]) as handle:
        for number, line in enumerate(handle, 1):
            if valid(line.rstrip("\n")):
                good += 1
                print(f"{number} ok")
            else:
                bad += 1
                print(f"{number} bad")
    print(f"ok {good}")
    print(f"bad {bad}")


main()
