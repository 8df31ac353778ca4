"""Every relative link of the first page and the documentation reaches a file, and every anchor a heading.

README.md, docs/*.md: ``[text](target)`` with a relative target must name an existing file or folder; a ``#anchor``
into a Markdown page must match one of its headings as GitHub writes the anchor (lower case, punctuation dropped,
spaces as hyphens). Web addresses are not followed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def anchor_of(heading: str) -> str:
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        if line.startswith("#"):
            base = anchor_of(line.lstrip("#"))
            name, count = base, 1
            while name in found:  # GitHub numbers repeated headings
                name, count = f"{base}-{count}", count + 1
            found.add(name)
    return found


def links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text()))


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_relative_links_reach_files_and_headings(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"^[a-z]+:", target):
            continue
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_the_anchor_rule_follows_github() -> None:
    assert anchor_of(" The GPU lock on the node, and where a verl step goes (H100, 2026-12-07)") == \
        "the-gpu-lock-on-the-node-and-where-a-verl-step-goes-h100-2026-12-07"
    assert anchor_of("Harbor verifier mode (`[task].verifier.mode = \"harbor\"`)") == \
        "harbor-verifier-mode-taskverifiermode--harbor"
