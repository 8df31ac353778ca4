"""Turn a model reply into actions: XML tags whose body is YAML.

    <bash>
    cmd: ls -la
    </bash>

Rules (docs/actions.md has the full list):

* ``<think>...</think>`` is removed first (an unclosed ``<think>`` hides the rest of the reply; a
  ``</think>`` without an opening tag hides everything before it).
* Tags are found left to right. A registered tool's tag must be closed by ``</name>``; its body is
  everything in between (other tags inside it are part of the body).
* A paired tag that is not a tool (``<python>..</python>``) is reported as unknown, never skipped.
  A lone ``<word>`` in prose is ignored.
* A Markdown code fence around the whole body (```` ```yaml ... ``` ````) is removed.
* The body is YAML. When YAML fails or does not give the tool's fields, tools with a primary
  field (``bash``: ``cmd``, ``finish``: ``message``) fall back, only where unambiguous:
  - ``cmd: <text>`` (plus any following lines) where no other field of the tool appears at the
    start of a line: the raw text after ``cmd:`` is the value;
  - a body whose first line is not ``name: ...``: the whole body is the value.
  Otherwise the parser raises :class:`AgentFormatError` with a teaching message and an example.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from terminal_agent.actions.base import TOOLS, Tool
from terminal_agent.errors import AgentFormatError
from terminal_agent.registry import Registry

THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)
TAG = re.compile(r"<(/?)([A-Za-z_][A-Za-z0-9_-]*)>")
KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)[ \t]*:(?:[ \t]|$)")
BLOCK_INDICATOR = re.compile(r"^[|>][+-]?[0-9]?$")
CODE_FENCE = re.compile(r"^```[A-Za-z0-9_+-]*\n(.*)\n```$", re.DOTALL)
YAML_HINT = "The body is YAML: one `field: value` per line; for multi-line values or values with `: ` use a block scalar (`field: |` then indented lines)."


@dataclass
class ParsedAction:
    """A well-formed action ready to run."""

    name: str
    args: BaseModel
    raw: dict[str, Any]


@dataclass
class ParseFailure:
    """A tag that could not be turned into an action; ``error.messages`` is the teaching text."""

    name: str | None
    error: AgentFormatError
    known_tool: bool = True
    """False for an unknown tag (the rest of the reply still runs)."""


@dataclass
class ParsedReply:
    items: list[ParsedAction | ParseFailure] = field(default_factory=list)
    truncated: bool = False
    """A tool tag was opened and never closed (typically the output limit was hit)."""
    text: str = ""
    """The reply without think blocks."""
    thought: str = ""
    """The text of the think blocks."""

    @property
    def actions(self) -> list[ParsedAction]:
        return [item for item in self.items if isinstance(item, ParsedAction)]


class ReplyText(str):
    """A reply's visible text that carries its parse: the agent parses a reply once and hands this to the env, which
    runs the actions parsed here instead of parsing the text again. It is a ``str`` (what rLLM's ``Action.action``
    is), so any engine passes it on unchanged; a plain string still works, parsed where it is run."""

    parsed: ParsedReply

    def __new__(cls, parsed: ParsedReply) -> "ReplyText":
        text = super().__new__(cls, parsed.text)
        text.parsed = parsed
        return text

    def __reduce__(self) -> tuple[type["ReplyText"], tuple[ParsedReply]]:  # a copy (pickle, Ray) keeps the parse
        return ReplyText, (self.parsed,)


def parsed_reply(reply: str) -> ParsedReply:
    """The parse a :class:`ReplyText` carries, or ``reply`` parsed now."""
    return reply.parsed if isinstance(reply, ReplyText) else parse_reply(reply)


def strip_think(text: str) -> tuple[str, str]:
    """``(reply without think blocks, thought text)``."""
    thoughts: list[str] = []

    def keep(match: re.Match[str]) -> str:
        thoughts.append(match.group(0)[len("<think>") : -len("</think>")].strip())
        return ""

    visible = THINK_BLOCK.sub(keep, text)
    if "</think>" in visible:  # opening tag was in the prompt (chat templates do this)
        before, _, visible = visible.rpartition("</think>")
        thoughts.insert(0, before.replace("<think>", "").strip())
    if "<think>" in visible:  # never closed: everything after it is thought
        visible, _, rest = visible.partition("<think>")
        thoughts.append(rest.strip())
    return visible.strip(), "\n".join(t for t in thoughts if t)


def has_unclosed_action(text: str, tools: Registry[type[Tool]] = TOOLS) -> bool:
    """True when ``text`` opens a tool tag that it never closes."""
    return parse_reply(text, tools).truncated


def parse_reply(text: str, tools: Registry[type[Tool]] = TOOLS) -> ParsedReply:
    """All action tags of ``text`` in order, each parsed or turned into a teaching failure."""
    visible, thought = strip_think(text or "")
    reply = ParsedReply(text=visible, thought=thought)
    position = 0
    while True:
        match = TAG.search(visible, position)
        if match is None:
            break
        closing, name = match.group(1), match.group(2)
        if closing:
            position = match.end()
            continue
        end_tag = f"</{name}>"
        end = visible.find(end_tag, match.end())
        if name in tools:
            if end < 0:
                reply.truncated = True
                reply.items.append(ParseFailure(name, _unclosed_error(tools.get(name))))
                break
            body = visible[match.end() : end]
            try:
                reply.items.append(parse_action(name, body, tools))
            except AgentFormatError as error:
                reply.items.append(ParseFailure(name, error))
            position = end + len(end_tag)
        elif end >= 0:
            reply.items.append(ParseFailure(name, _unknown_tag_error(name, tools), known_tool=False))
            position = end + len(end_tag)
        else:
            position = match.end()
    return reply


def parse_action(name: str, body: str, tools: Registry[type[Tool]] = TOOLS) -> ParsedAction:
    """Parse the YAML ``body`` of tool ``name``. Raises :class:`AgentFormatError` (teaching text)."""
    tool = tools.get(name)
    fields = set(tool.Args.model_fields)
    body = textwrap.dedent(body.strip("\n")).rstrip()
    fenced = CODE_FENCE.match(body.strip())
    if fenced:  # a Markdown code fence around the whole body is not part of it
        body = textwrap.dedent(fenced.group(1)).rstrip()
    if not body.strip():
        raise _teaching(tool, f"the <{name}> body is empty.")
    yaml_problem = None
    try:
        data = yaml.safe_load(body + "\n")  # a final newline so `key: |` keeps the text's last newline
    except yaml.YAMLError as exc:
        data, yaml_problem = None, _describe_yaml_error(exc)
    raw: dict[str, Any] | None = None
    if isinstance(data, dict) and data and all(isinstance(key, str) and key in fields for key in data):
        raw = dict(data)
        primary = tool.primary_field
        if primary and primary in raw and not isinstance(raw[primary], str):
            fallback = _fallback(tool, body)
            if fallback is not None:
                raw = fallback
        elif primary and isinstance(raw.get(primary), str):
            plain = _plain_primary_text(tool, body)
            if plain is not None:  # YAML ate a ` #...` as a comment or folded lines: keep the text as written
                raw[primary] = plain
    else:
        raw = _fallback(tool, body)
    if raw is None:
        if yaml_problem:
            reason = f"its YAML does not parse: {yaml_problem}."
        elif isinstance(data, dict):
            unknown = sorted(str(key) for key in data if key not in fields)
            reason = f"unknown field(s) {', '.join(unknown)}; <{name}> takes: {', '.join(tool.Args.model_fields)}."
        else:
            reason = f"the body must be `field: value` lines; <{name}> takes: {', '.join(tool.Args.model_fields)}."
        raise _teaching(tool, reason, variant=_variant(data), yaml_hint=True)
    try:
        args = tool.Args.model_validate(raw)
    except ValidationError as exc:
        raise _teaching(tool, _describe_validation_error(exc), variant=_variant(raw)) from None
    return ParsedAction(name=name, args=args, raw=raw)


def _fallback(tool: type[Tool], body: str) -> dict[str, Any] | None:
    """The primary field's raw text, when that reading is unambiguous; else None."""
    primary = tool.primary_field
    if primary is None:
        return None
    others = set(tool.Args.model_fields) - {primary}
    lines = body.split("\n")
    for line in lines:
        key = KEY_LINE.match(line)
        if key and key.group(1) in others:
            return None
    first = KEY_LINE.match(lines[0])
    if first is None:
        return {primary: body.strip()}
    if first.group(1) != primary:
        return None
    head = lines[0][first.end() :].strip()
    rest = textwrap.dedent("\n".join(lines[1:])).strip("\n")
    if BLOCK_INDICATOR.match(head):
        value = rest
    else:
        value = head + ("\n" + rest if rest else "")
    return {primary: value.strip()} if value.strip() else None


def _plain_primary_text(tool: type[Tool], body: str) -> str | None:
    """The primary field's text exactly as written when it is an unquoted plain scalar, else None.

    YAML reads ``cmd: echo "a #b"`` as ``echo "a`` (a comment) and joins indented continuation
    lines with spaces; for a command or a message the written text is what was meant.
    """
    primary = tool.primary_field
    fields = set(tool.Args.model_fields)
    lines = body.split("\n")
    for index, line in enumerate(lines):
        key = KEY_LINE.match(line)
        if key and key.group(1) == primary:
            head = line[key.end() :].strip()
            if not head or head[0] in "'\"|>[{&*!%@`":
                return None
            rest = []
            for following in lines[index + 1 :]:
                other = KEY_LINE.match(following)
                if other and other.group(1) in fields:
                    break
                rest.append(following)
            tail = textwrap.dedent("\n".join(rest)).strip("\n")
            return (head + ("\n" + tail if tail else "")).strip()
    return None


def _variant(data: Any) -> str | None:
    action = data.get("action") if isinstance(data, dict) else None
    return action if isinstance(action, str) else None


def _teaching(tool: type[Tool], reason: str, variant: str | None = None, yaml_hint: bool = False) -> AgentFormatError:
    messages = [f"Your <{tool.name}> action was not run: {reason}"]
    if yaml_hint:
        messages.append(YAML_HINT)
    messages.append(f"Correct example:\n{tool.example(variant)}")
    return AgentFormatError(*messages)


def _unclosed_error(tool: type[Tool]) -> AgentFormatError:
    return AgentFormatError(
        f"Your <{tool.name}> action was not run: it is never closed with </{tool.name}> "
        "(perhaps the reply was too long). Keep replies short and close every tag.",
        f"Correct example:\n{tool.example()}",
    )


def _unknown_tag_error(name: str, tools: Registry[type[Tool]]) -> AgentFormatError:
    valid = ", ".join(f"<{tool}>" for tool in tools.names())
    if name.endswith("_output"):
        detail = f"<{name}> blocks are written by the environment after your actions run; do not write them."
    else:
        detail = f"<{name}> is not an action."
    return AgentFormatError(f"{detail} Valid actions: {valid}.", f"Example:\n{tools.get('bash').example() if 'bash' in tools else ''}")


def _describe_yaml_error(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    return f"{problem} (line {mark.line + 1})" if mark is not None else str(problem)


def _describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        location = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        parts.append(f"{location}: {message}" if location else message)
    return "; ".join(parts) + "."
