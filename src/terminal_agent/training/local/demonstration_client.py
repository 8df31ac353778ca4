"""A token-in/token-out client that replays given replies as if the policy had sampled them.

Used for the SFT warm start (reference-solution transcripts) and as the deterministic driver of
the trainer's tests: each reply text is tokenized once, here, by the policy's tokenizer, the end
of turn token appended, and its logprobs under the current policy computed teacher-forced. The
agent, env and grader then run exactly as they do for sampled replies, and the trainer gets
:class:`~terminal_agent.outcome.TurnTokens` like any other. (The trainer still never
re-tokenizes: the tokens are made by the client, as a sampler would make them.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from terminal_agent.interfaces import ModelResponse
from terminal_agent.models.scripted import ScriptExhaustedError

FINISH_REPLY = "<finish>\nmessage: done\n</finish>"
"""The agent's ``finish`` action, as a demonstration writes it."""


def bash_reply(command: str) -> str:
    """The agent's ``bash`` action running ``command`` (YAML block scalar, as the parser reads it)."""
    import yaml

    return "<bash>\n" + yaml.safe_dump({"cmd": command}, default_style="|", width=10_000) + "</bash>"

ReplyFunction = Callable[[list[dict[str, str]]], str]


class DemonstrationClient:
    """Replays ``replies`` (a list, or ``f(messages) -> text``) with the policy's token ids and logprobs."""

    is_thread_safe = True

    def __init__(self, model: Any, tokenizer: Any, replies: Sequence[str] | ReplyFunction, *, temperature: float = 1.0, name: str = "demonstration"):
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.temperature = temperature
        self._replies = replies
        self._index = 0
        self._lock = threading.Lock()

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        from terminal_agent.models.embedded import encode_chat

        return len(encode_chat(self.tokenizer, messages))

    def _next_reply(self, messages: list[dict[str, str]]) -> str:
        if callable(self._replies):
            return self._replies(messages)
        with self._lock:
            if self._index >= len(self._replies):
                raise ScriptExhaustedError(f"demonstration ran out of replies after {self._index}")
            reply = self._replies[self._index]
            self._index += 1
        return reply

    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        import torch

        from terminal_agent.models.embedded import encode_chat
        from terminal_agent.models.token_logprobs import compute_token_logprobs

        text = self._next_reply(messages)
        prompt_ids = encode_chat(self.tokenizer, messages)
        completion_ids = list(self.tokenizer.encode(text, add_special_tokens=False))
        end = self.tokenizer.eos_token_id
        if end is not None:
            completion_ids.append(int(end))
        temperature = float(sampling.get("temperature", self.temperature) or 1.0)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                logprobs = compute_token_logprobs(self.model, prompt_ids, completion_ids, temperature).float().cpu().tolist()
        finally:
            self.model.train(was_training)
        return ModelResponse(
            text=text,
            finish_reason="stop",
            prompt_tokens=len(prompt_ids),
            completion_tokens=len(completion_ids),
            prompt_ids=prompt_ids,
            completion_ids=completion_ids,
            logprobs=logprobs,
        )


def alternating_demonstrations(tasks: Sequence[Any], *, strict: bool = True) -> Callable[[Any, Any], DemonstrationClient]:
    """A ``client_factory`` for ``train_local`` whose groups have real reward variance, through the real env and grader.

    Within each task, the first episode to ask runs the task's reference solution and then finishes (reward 1),
    the next finishes at once (partial credit or 0), and so on alternately. ``strict``: a first prompt that names
    no known task instruction is an error (the tests); otherwise that episode just finishes (the benchmarks).
    """
    by_instruction = {t.instruction: t.solution for t in tasks}

    def factory(policy: Any, config: Any) -> DemonstrationClient:
        counts: dict[str, int] = {}
        lock = threading.Lock()

        def reply(messages: list[dict[str, str]]) -> str:
            if any(m["role"] == "assistant" for m in messages):
                return FINISH_REPLY
            user = "\n".join(m["content"] for m in messages if m["role"] == "user")
            solution = next((s for instruction, s in by_instruction.items() if instruction in user), None)
            if solution is None:
                if strict:
                    raise LookupError("no known task instruction in the first prompt")
                return FINISH_REPLY
            with lock:
                k = counts.get(solution, 0)
                counts[solution] = k + 1
            return bash_reply(solution) if k % 2 == 0 else FINISH_REPLY

        return DemonstrationClient(policy.model, policy.tokenizer, reply, temperature=config.temperature)

    return factory


__all__ = ["FINISH_REPLY", "DemonstrationClient", "alternating_demonstrations", "bash_reply"]
