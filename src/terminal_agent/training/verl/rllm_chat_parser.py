"""A chat parser rLLM accepts for any Hugging Face chat template, and token-exact multi-turn prompts.

rLLM picks its chat parser by the model's *name* (``ChatTemplateParser.get_parser``: Qwen, Llama,
DeepSeek, gpt-oss, Kimi). Any other model gets the generic ``ChatTemplateParser``, which

* checks that rendering each message alone and concatenating gives the whole conversation's text
  (``verify_equivalence``). Templates that add a default system prompt whenever the first message is
  not a system message (SmolLM2's, Llama 3's) fail it, and ``VerlEngine``'s constructor raises;
* has no ``parse_completion``, so ``VerlEngine`` raises ``NotImplementedError`` on the first reply.

This module provides, without patching rLLM:

* :class:`TemplateChatParser` - renders with the tokenizer's own template. A conversation that starts
  with a system message (or ``is_first_msg=True``) renders exactly as the template does; messages
  that continue a conversation render as the text the template adds for them (the template is run
  on a stub context with and without them, and the difference kept), so it passes rLLM's equivalence
  check. ``parse_completion`` splits ``<think>`` reasoning from content and strips the end-of-turn.
* :func:`chat_parser_for` - rLLM's own parser when rLLM has a specific one for the model and it
  agrees with the model's template, else ours.
* :class:`TurnPromptBuilder` - each turn's prompt ids as the previous prompt ids + completion ids
  (+ the end-of-turn tokens the template adds that the sampled completion lacks) + the new messages'
  ids, so a trajectory's turns merge into one training row (rLLM zeroes the masks otherwise).
* :func:`rllm_check_safe_chat_template` and :func:`prepare_model_dir_for_rllm` - ``VerlEngine`` runs the
  generic check in its constructor, before any code of ours can choose a parser. The prepared folder
  links the model's files and carries the model's template wrapped so that a message rendered alone
  gives its in-conversation text; every conversation of two or more messages, or starting with a
  system message, renders exactly as before. :class:`TemplateChatParser` unwraps it.
"""

from __future__ import annotations

import contextlib
import io
import logging
from pathlib import Path
from typing import Any

from terminal_agent.compat.rllm import RLLM_AVAILABLE
from terminal_agent.errors import ConfigError

if RLLM_AVAILABLE:  # pragma: no cover - exercised in the rLLM conformance venvs
    from rllm.parser import ChatTemplateParser as _ParserBase
else:
    _ParserBase = object

logger = logging.getLogger(__name__)

STUB_SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
STUB_USER = {"role": "user", "content": "Hello."}
STUB_ASSISTANT = {"role": "assistant", "content": "Hello!"}
PROBE_CONVERSATION = [
    STUB_SYSTEM,
    {"role": "user", "content": "List the files."},
    {"role": "assistant", "content": "I will list them."},
    {"role": "user", "content": "a.txt b.txt"},
]
"""The shape our agent sends (system, task, then reply/observation pairs): a parser must render it as the template does."""

_CONTENT_MARK = "TERMINALAGENTCONTENTMARK"

_WRAP_HEAD = (
    "{#- terminal-agent: the model's own template, wrapped so that a message rendered alone gives the text it adds "
    "to a conversation (rLLM's equivalence check) -#}\n{%- macro _ta_render(messages, add_generation_prompt) %}"
)
_WRAP_TAIL = (
    "{% endmacro -%}\n"
    "{%- if messages | length == 1 and messages[0]['role'] != 'system' -%}\n"
    "{%- set _ta_context = [{'role': 'system', 'content': 'You are a helpful assistant.'}] -%}\n"
    "{%- if messages[0]['role'] == 'assistant' %}{% set _ta_context = _ta_context + [{'role': 'user', 'content': 'Hello.'}] %}"
    "{% endif -%}\n"
    "{%- set _ta_head = _ta_render(_ta_context, false) -%}\n"
    "{{- _ta_render(_ta_context + messages, add_generation_prompt)[_ta_head | length:] -}}\n"
    "{%- else -%}\n{{- _ta_render(messages, add_generation_prompt) -}}\n{%- endif -%}\n"
)


def original_chat_template(template: str | None) -> str | None:
    """The model's own template: ``template`` itself, or what :func:`rllm_check_safe_chat_template` wrapped."""
    if isinstance(template, str) and template.startswith(_WRAP_HEAD) and template.endswith(_WRAP_TAIL):
        return template[len(_WRAP_HEAD) : -len(_WRAP_TAIL)]
    return template


def rllm_check_safe_chat_template(template: str) -> str:
    """``template`` wrapped so that rLLM's generic parser passes its equivalence check (idempotent).

    A single non-system message renders as the text it adds after a stub system prompt (and a stub
    user turn before an assistant message); everything else renders with the original template
    unchanged. The only conversations that render differently are lone non-system messages, which
    lose the template's default system prompt.
    """
    if not isinstance(template, str) or not template:
        raise ConfigError("chat template: rLLM needs the tokenizer's chat template as one string (none, or a dict of named templates)")
    return template if original_chat_template(template) != template else _WRAP_HEAD + template + _WRAP_TAIL


def _render(tokenizer: Any, template: str | None, messages: list[dict[str, Any]], add_generation_prompt: bool, **kwargs: Any) -> str:
    text = tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=add_generation_prompt, chat_template=template, **kwargs
    )
    if not isinstance(text, str):  # a batch or an encoding: never asked for here
        raise ConfigError(f"chat template: apply_chat_template(tokenize=False) returned {type(text).__name__}, not text")
    return text


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False))


class TemplateChatParser(_ParserBase):
    """rLLM's ``ChatTemplateParser`` contract over the tokenizer's own chat template (see the module doc).

    ``parse(messages, add_generation_prompt=False, is_first_msg=False)``: a conversation that starts
    with a system message, or any list with ``is_first_msg=True``, renders as the template renders
    it (default system prompt included); otherwise the messages continue a conversation and render as
    the text the template adds for them. ``parse_completion(ids)`` returns ``content``, ``reasoning``
    and ``tool_calls`` (always empty: no generic tool-call format exists; our agent's actions are in
    the content). ``disable_thinking`` is passed to the template as ``enable_thinking=False``, the
    switch templates with thinking read.
    """

    def __init__(self, tokenizer: Any, processor: Any = None, disable_thinking: bool = False) -> None:
        self.tokenizer = tokenizer
        self.processor = None  # text only: we render with the tokenizer's template, never a processor's
        self.disable_thinking = bool(disable_thinking)
        self.template = original_chat_template(getattr(tokenizer, "chat_template", None))
        if not isinstance(self.template, str) or not self.template:
            raise ConfigError(
                f"chat parser: the tokenizer of {getattr(tokenizer, 'name_or_path', '?')!r} has no chat template "
                "(set tokenizer.chat_template, or train a model that ships one)"
            )
        self.template_kwargs: dict[str, Any] = {"enable_thinking": False} if self.disable_thinking else {}
        self.generation_prompt = self._generation_prompt()
        self.assistant_end = self._assistant_end()
        self.eos_token = getattr(tokenizer, "eos_token", None)
        self.stop_ids = self._stop_ids()

    # --- rendering -----------------------------------------------------------------------------
    def render(self, messages: list[dict[str, Any]], add_generation_prompt: bool = False, **kwargs: Any) -> str:
        """The template's own rendering of ``messages`` (a whole conversation)."""
        return _render(self.tokenizer, self.template, messages, add_generation_prompt, **self.template_kwargs, **kwargs)

    def parse(self, messages: list[dict[str, Any]], add_generation_prompt: bool = False, is_first_msg: bool = False, **kwargs: Any) -> str:
        tools = [getattr(tool, "json", tool) for tool in kwargs.get("tools") or []]  # rLLM's Tool objects as schemas
        extra = {"tools": tools} if tools else {}
        if not messages:
            return self.generation_prompt if add_generation_prompt else ""
        if is_first_msg or messages[0].get("role") == "system":
            return self.render(messages, add_generation_prompt, **extra)
        return self._continuation(messages, add_generation_prompt, **extra)

    def _continuation(self, messages: list[dict[str, Any]], add_generation_prompt: bool, **kwargs: Any) -> str:
        """The text ``messages`` add to a conversation: the template on a stub context, with and without them."""
        failures = []
        for context in self._contexts(messages[0].get("role")):
            try:
                head = self.render(context, False, **kwargs)
                whole = self.render(context + list(messages), add_generation_prompt, **kwargs)
            except Exception as exc:  # noqa: BLE001 - a template may refuse one context shape (roles must alternate...)
                failures.append(f"{type(exc).__name__}: {exc}")
                continue
            if whole.startswith(head):
                return whole[len(head) :]
            failures.append("the rendering of the context is not a prefix of the longer conversation's")
        raise ConfigError(
            f"chat parser: the chat template of {getattr(self.tokenizer, 'name_or_path', '?')!r} does not render a "
            f"conversation as its prefix plus the new messages, so turns cannot be rendered one by one ({'; '.join(failures)})"
        )

    @staticmethod
    def _contexts(role: str | None) -> list[list[dict[str, Any]]]:
        if role == "assistant":
            return [[STUB_SYSTEM, STUB_USER], [STUB_USER]]
        return [[STUB_SYSTEM, STUB_USER, STUB_ASSISTANT], [STUB_USER, STUB_ASSISTANT], [STUB_SYSTEM]]

    def _generation_prompt(self) -> str:
        context = [STUB_SYSTEM, STUB_USER]
        return self.render(context, True)[len(self.render(context, False)) :]

    def _assistant_end(self) -> str:
        """What the template writes after an assistant message's content (``<|im_end|>\\n`` for ChatML)."""
        text = self._continuation([{"role": "assistant", "content": _CONTENT_MARK}], False)
        at = text.rfind(_CONTENT_MARK)
        return text[at + len(_CONTENT_MARK) :] if at >= 0 else ""

    def _stop_ids(self) -> set[int]:
        special = set(getattr(self.tokenizer, "all_special_ids", None) or [])
        added = getattr(self.tokenizer, "added_tokens_decoder", None) or {}
        special |= {token_id for token_id, token in added.items() if getattr(token, "special", False)}
        stops = {token for token in _encode(self.tokenizer, self.assistant_end) if token in special}
        eos = getattr(self.tokenizer, "eos_token_id", None)
        if isinstance(eos, int):
            stops.add(eos)
        return stops

    # --- completions ---------------------------------------------------------------------------
    def parse_completion(self, completion_ids: list[int]) -> dict[str, Any]:
        ids = list(completion_ids)
        while ids and ids[-1] in self.stop_ids:
            ids.pop()
        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        end = self.assistant_end.strip()
        if end and text.rstrip().endswith(end):
            text = text.rstrip()[: -len(end)]
        reasoning = ""
        if "</think>" in text:
            reasoning, _, text = text.partition("</think>")
            reasoning = reasoning.strip()
            reasoning = reasoning[len("<think>") :].strip() if reasoning.startswith("<think>") else reasoning
        elif text.lstrip().startswith("<think>") and not self.disable_thinking:  # thinking, cut before it closed
            reasoning, text = text.lstrip()[len("<think>") :].strip(), ""
        return {"content": text.strip(), "reasoning": reasoning, "tool_calls": []}


def _quietly(function: Any, *args: Any, **kwargs: Any) -> Any:
    """rLLM's check prints both renderings on failure: keep the library quiet."""
    with contextlib.redirect_stdout(io.StringIO()):
        return function(*args, **kwargs)


def rllm_parser_of(tokenizer: Any, processor: Any = None, disable_thinking: bool = False) -> Any:
    """What ``ChatTemplateParser.get_parser`` gives for this tokenizer (what ``VerlEngine`` builds), or None if it raises."""
    if not RLLM_AVAILABLE:
        return None
    try:
        return _quietly(_ParserBase.get_parser, tokenizer, processor=processor, disable_thinking=disable_thinking)
    except AssertionError:  # the generic parser failed its equivalence check
        return None


def parser_agrees_with_template(parser: Any, tokenizer: Any) -> bool:
    """``parser`` passes rLLM's equivalence check and renders our agent's conversation as the template does."""
    try:
        template = original_chat_template(tokenizer.chat_template)
        expected = _render(tokenizer, template, PROBE_CONVERSATION, True)
        rendered = parser.parse(PROBE_CONVERSATION, add_generation_prompt=True, is_first_msg=True)
        if rendered != expected:
            return False
        if RLLM_AVAILABLE:
            from rllm.parser.utils import PARSER_TEST_MESSAGES

            return bool(_quietly(parser.verify_equivalence, PARSER_TEST_MESSAGES, verbose=False))
        return True
    except Exception as exc:  # noqa: BLE001 - a parser that cannot render the probe does not agree
        logger.debug("chat parser %s: %s: %s", type(parser).__name__, type(exc).__name__, exc)
        return False


def chat_parser_for(tokenizer: Any, processor: Any = None, disable_thinking: bool = False) -> Any:
    """rLLM's own parser when rLLM has a specific one for this model that agrees with its template, else ours.

    rLLM's generic ``ChatTemplateParser`` is never returned (it has no ``parse_completion``).
    """
    theirs = rllm_parser_of(tokenizer, processor=processor, disable_thinking=disable_thinking)
    if theirs is not None and type(theirs) is not _ParserBase and parser_agrees_with_template(theirs, tokenizer):
        logger.info("chat parser: rLLM's %s for %s", type(theirs).__name__, getattr(tokenizer, "name_or_path", "?"))
        return theirs
    parser = TemplateChatParser(tokenizer, disable_thinking=disable_thinking)
    logger.info("chat parser: the model's own template (%s) for %s", type(parser).__name__, getattr(tokenizer, "name_or_path", "?"))
    return parser


class TurnPromptBuilder:
    """Prompt ids for each turn of one conversation, each turn extending the last one token for token.

    ``prompt_ids(messages)`` gives turn k+1's prompt as turn k's prompt ids + completion ids + the
    end-of-turn tokens the template writes after an assistant message that the sampled completion
    lacks (ChatML's ``\\n`` after ``<|im_end|>``; the whole ``<|im_end|>\\n`` after a reply cut by the
    token cap) + the ids of the messages added since, rendered as a continuation with the generation
    prompt. That holds when ``messages`` is the last turn's messages, then one assistant message (the
    reply; its sampled ids stand for it, whatever its text), then the new ones. Any other list (the
    first turn, a rewritten history) renders whole. Call ``record`` after each successful call.
    """

    def __init__(self, parser: Any, tokenizer: Any = None) -> None:
        self.parser = parser
        self.tokenizer = tokenizer if tokenizer is not None else parser.tokenizer
        self.turn_end_ids = self._turn_end_ids()
        self._messages: list[dict[str, Any]] | None = None
        self._ids: list[int] = []
        self.extended_turns = 0
        """How many prompts were built by extension (the rest rendered whole)."""

    def _turn_end_ids(self) -> list[int]:
        text = self.parser.parse([{"role": "assistant", "content": _CONTENT_MARK}], is_first_msg=False)
        at = text.rfind(_CONTENT_MARK)
        return _encode(self.tokenizer, text[at + len(_CONTENT_MARK) :]) if at >= 0 else []

    def missing_turn_end(self, completion_ids: list[int]) -> list[int]:
        """The end-of-turn ids the template adds that ``completion_ids`` does not already end with."""
        end = self.turn_end_ids
        for overlap in range(min(len(end), len(completion_ids)), 0, -1):
            if list(completion_ids[-overlap:]) == end[:overlap]:
                return end[overlap:]
        return list(end)

    def _extends(self, messages: list[dict[str, Any]]) -> bool:
        previous = self._messages
        if previous is None or len(messages) < len(previous) + 1:
            return False
        same = all(_same_message(a, b) for a, b in zip(previous, messages[: len(previous)]))
        return same and messages[len(previous)].get("role") == "assistant"

    def prompt_ids(self, messages: list[dict[str, Any]]) -> list[int]:
        """This turn's prompt ids (nothing is remembered until ``record``)."""
        previous = self._messages
        if previous is not None and self._extends(messages):
            new = messages[len(previous) + 1 :]
            text = self.parser.parse(new, add_generation_prompt=True, is_first_msg=False, accumulate_reasoning=False)
            return list(self._ids) + _encode(self.tokenizer, text)
        text = self.parser.parse(messages, add_generation_prompt=True, is_first_msg=True, accumulate_reasoning=False)
        return _encode(self.tokenizer, text)

    def record(self, messages: list[dict[str, Any]], prompt_ids: list[int], completion_ids: list[int]) -> None:
        """Remember the turn just sampled: the next turn's prompt extends ``prompt_ids + completion_ids``."""
        if self._extends(messages):
            self.extended_turns += 1
        self._messages = [dict(message) for message in messages]
        self._ids = list(prompt_ids) + list(completion_ids) + self.missing_turn_end(list(completion_ids))


def _same_message(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("role") == b.get("role") and a.get("content") == b.get("content")


def _ids_the_template_writes(tokenizer: Any) -> set[int]:
    """Every token id of the probe conversations as the model's own template renders them (with and without
    the generation prompt), plus the end-of-sequence ids: what a training row of ours can hold besides replies."""
    template = original_chat_template(tokenizer.chat_template)
    ids: set[int] = set()
    for conversation in (PROBE_CONVERSATION, PROBE_CONVERSATION[1:], PROBE_CONVERSATION[:3]):
        for generation_prompt in (True, False):
            ids.update(_encode(tokenizer, _render(tokenizer, template, conversation, generation_prompt)))
    for token_id in (tokenizer.eos_token_id, tokenizer.bos_token_id):
        if isinstance(token_id, int):
            ids.add(token_id)
    return ids


def rllm_safe_pad_token(tokenizer: Any) -> str | None:
    """A pad token rLLM's verl transform can use on this tokenizer, or None when the current one already is.

    rLLM builds a row's attention mask as ``ids != pad_token_id``. Where the pad token is also a token the
    chat template writes (SmolLM2: pad = eos = ``<|im_end|>``, the end of every turn), each turn end of a
    row is masked as padding: the actor never attends to it nor trains on it, and its positions shift
    against what vLLM sampled (rollout-vs-actor log-prob gaps near 1 on some tokens). This picks a
    special token the template never writes instead: a ``pad``/``endoftext``/``unk`` token first, then
    any other special token. Raises :class:`ConfigError` when the vocabulary has none.
    """
    used = _ids_the_template_writes(tokenizer)
    if tokenizer.pad_token_id is not None and tokenizer.pad_token_id not in used:
        return None
    candidates: list[str] = [t for t in dict.fromkeys(list(tokenizer.all_special_tokens) + list(tokenizer.get_added_vocab()))
                  if isinstance(tokenizer.convert_tokens_to_ids(t), int) and tokenizer.convert_tokens_to_ids(t) not in used]

    def preference(token: str) -> int:
        name = token.lower()
        return next((rank for rank, word in enumerate(("pad", "endoftext", "unk")) if word in name), 3)

    if not candidates:
        raise ConfigError(
            f"tokenizer {getattr(tokenizer, 'name_or_path', '?')}: its pad token {tokenizer.pad_token!r} is a token the chat "
            "template writes, and no special token is free to pad with (rLLM masks every pad id as padding); "
            "add a pad token to the tokenizer"
        )
    return sorted(candidates, key=preference)[0]


def prepare_model_dir_for_rllm(model_dir: str | Path, out_dir: str | Path) -> Path:
    """A model folder whose tokenizer rLLM's ``VerlEngine`` and verl transform take as they are: ``model_dir``
    itself when it already is one.

    Otherwise ``out_dir`` gets the tokenizer saved with :func:`rllm_check_safe_chat_template` (where rLLM's
    parser check fails) and :func:`rllm_safe_pad_token` (where the pad token is one the template writes), and
    a symbolic link to every other file of ``model_dir`` (weights, config); point verl's
    ``actor_rollout_ref.model.path`` at it. Checkpoints then carry the wrapped template and the pad token;
    :func:`original_chat_template` gives the model's own template back (the pad token only pads). Idempotent.
    """
    from transformers import AutoTokenizer

    source = Path(model_dir)
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    if not RLLM_AVAILABLE:
        return source
    wrap = rllm_parser_of(tokenizer) is None
    pad = rllm_safe_pad_token(tokenizer)
    if not wrap and pad is None:
        return source
    target = Path(out_dir)
    if target.resolve() == source.resolve():
        raise ConfigError(f"prepare_model_dir_for_rllm: out_dir must differ from the model folder {source}")
    target.mkdir(parents=True, exist_ok=True)
    if wrap:
        tokenizer.chat_template = rllm_check_safe_chat_template(tokenizer.chat_template)
    if pad is not None:
        logger.info("pad token for rLLM: %r instead of %r (a token the chat template writes)", pad, tokenizer.pad_token)
        tokenizer.pad_token = pad
    tokenizer.save_pretrained(str(target))
    for entry in source.iterdir():
        link = target / entry.name
        if not link.exists() and not link.is_symlink():
            link.symlink_to(entry.resolve())
    prepared = AutoTokenizer.from_pretrained(str(target))
    if rllm_parser_of(prepared) is None or not _renders_like(prepared, tokenizer):
        raise ConfigError(
            f"prepare_model_dir_for_rllm: the wrapped chat template of {source} still fails rLLM's equivalence check "
            "or renders conversations differently; this template needs a parser of its own"
        )
    if rllm_safe_pad_token(prepared) is not None:
        raise ConfigError(f"prepare_model_dir_for_rllm: the saved tokenizer of {target} did not keep pad token {pad!r}")
    return target


def _renders_like(prepared: Any, tokenizer: Any) -> bool:
    conversations = [PROBE_CONVERSATION, PROBE_CONVERSATION[1:], PROBE_CONVERSATION[:2]]
    return all(
        _render(prepared, prepared.chat_template, c, g) == _render(tokenizer, original_chat_template(tokenizer.chat_template), c, g)
        for c in conversations
        for g in (True, False)
    )


__all__ = [
    "PROBE_CONVERSATION",
    "TemplateChatParser",
    "TurnPromptBuilder",
    "chat_parser_for",
    "original_chat_template",
    "parser_agrees_with_template",
    "prepare_model_dir_for_rllm",
    "rllm_check_safe_chat_template",
    "rllm_safe_pad_token",
    "rllm_parser_of",
]
