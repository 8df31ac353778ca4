"""Check, on the real batch of a verl step, that the tokens trained on are exactly the model's replies.

rLLM's ``AgentWorkflowPPOTrainer`` prints two rows of every step's ``DataProto`` with
``rllm.utils.visualization.visualize_trajectories``: the episode id, then each valid token of the row
decoded on its own and styled by its ``response_mask`` (blue: in the loss; dim: masked). With
``trainer.log_episodes=true`` rLLM's ``EpisodeLogger`` writes every episode the Workflow returned (each
step's ``model_response`` and ``chat_completions``) as JSON. This script reads both and checks, row by row:

- the in-loss tokens form one run per assistant turn, and run k is turn k's reply (its text, plus the
  end-of-turn token the sampler returned, if any): no reply token is masked and no other token trains;
- the masked tokens between two runs hold the next user message (the observation) and nothing of a reply;
- with ``--model DIR`` (the tokenizer the run trained with), the whole row is the conversation as the
  model's own chat template renders it, token for token: the prompt is the first messages with the
  generation prompt, and prompt + response is the rendered conversation up to the last reply. A token the
  batch marks as padding inside the row (rLLM masks every ``pad_token_id``; where pad = end of turn, every
  turn end vanishes) fails this.

    python check_response_masks.py LAUNCH_LOG EPISODE_LOG_DIR [--model DIR] [--json OUT]

Exit 0 when every printed row checks; 1 when one does not (each named with its episode, turn and the
first differing characters); 2 when there is nothing to check.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: One styled token of click.style: SGR codes, the text, the reset.
_STYLED = re.compile(r"((?:\x1b\[[0-9;]*m)+)(.*?)\x1b\[0m", re.S)
_CODE = re.compile(r"\x1b\[([0-9;]*)m")
_RAY_PREFIX = re.compile(r"^(?:\x1b\[[0-9;]*m)*\([^)]*\)(?:\x1b\[[0-9;]*m)*\s")  # Ray's (Name pid=N), colored on a TTY-less log too
IN_LOSS_CODE = "34"  # VisualizationConfig.unmasked_token_style: fg blue
MASKED_CODE = "2"  # VisualizationConfig.masked_token_style: dim
#: Special tokens a sampler returns at the end of a reply (ChatML's turn end; the EOS of other templates).
END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "</s>")
#: What the rendered conversation may hold after a row's last token (as shown): nothing, the template's newline
#: after the turn end, or the turn end itself when the reply was cut at its token cap.
ROW_END_TAILS = ("", "\\n", "<|im_end|>\\n", "<|im_end|>")


def shown(text: str) -> str:
    """``text`` as the visualizer shows a token: newlines, returns and tabs escaped."""
    return text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


@dataclass
class PrintedRow:
    """One row of a step's batch as rLLM's visualizer printed it."""

    episode_id: str
    line: int
    runs: list[tuple[bool, str]] = field(default_factory=list)
    """The response's tokens merged into runs: (in the loss, text as shown)."""
    prompt: str = ""
    """The prompt's valid tokens, as shown."""


@dataclass
class RowCheck:
    episode_id: str
    line: int
    turns_in_episode: int
    loss_runs: int
    ok: bool
    problem: str = ""


def _clean(line: str) -> str:
    return _RAY_PREFIX.sub("", line.rstrip("\n"))


def parse_runs(line: str) -> list[tuple[bool, str]]:
    """The styled tokens of one printed response line, merged into runs of equal mask."""
    runs: list[tuple[bool, str]] = []
    for match in _STYLED.finditer(line):
        codes = {code for seq in _CODE.findall(match.group(1)) for code in seq.split(";") if code}
        if IN_LOSS_CODE in codes:
            in_loss = True
        elif MASKED_CODE in codes:
            in_loss = False
        else:
            raise ValueError(f"a token styled {sorted(codes)} is neither in the loss (34) nor masked (2)")
        if runs and runs[-1][0] == in_loss:
            runs[-1] = (in_loss, runs[-1][1] + match.group(2))
        else:
            runs.append((in_loss, match.group(2)))
    return runs


def parse_log(path: Path) -> list[PrintedRow]:
    """Every row the visualizer printed in ``path`` (a launch log; Ray's ``(pid=...)`` prefixes allowed)."""
    lines = [_clean(line) for line in path.read_text(errors="replace").splitlines()]
    rows: list[PrintedRow] = []
    for i, line in enumerate(lines):
        if not re.fullmatch(r"Sample \d+", _CODE.sub("", line).strip()):
            continue
        header = next((_CODE.sub("", lines[j]) for j in range(i + 1, min(i + 4, len(lines)))
                       if "Episode: " in _CODE.sub("", lines[j])), None)
        separator = next((j for j in range(i + 1, min(i + 12, len(lines))) if lines[j].strip() == "-" * 16), None)
        if header is None or separator is None or separator + 1 >= len(lines):
            continue
        episode_id = header.split("Episode: ", 1)[1].split(" | ")[0].strip()
        prompt = "".join(text for _, text in parse_runs(lines[separator - 1])) if separator >= 1 else ""
        response = _response_line(lines, separator)
        if response is None:
            continue
        rows.append(PrintedRow(episode_id=episode_id, line=response + 1, runs=parse_runs(lines[response]),
                               prompt=prompt))
    return rows


INTERLEAVED_LINES = 8
"""How far past a row's separator its response line may be pushed by other processes' lines."""


def _response_line(lines: list[str], separator: int) -> int | None:
    """The index of the row's response line: the first line after the separator whose tokens are all styled as
    in the loss or masked. Ray prints every worker's output into one log, so the next step's progress bar, a
    "Rollout completed" line (yellow or green) or verl's ``step:N`` line can land between the separator and
    the response (seen on the H200 run of 2026-12-05, where the last row of a step was read as empty)."""
    for j in range(separator + 1, min(separator + 1 + INTERLEAVED_LINES, len(lines))):
        try:
            runs = parse_runs(lines[j])
        except ValueError:  # another process's colored line: not the row's
            continue
        if runs:
            return j
    return None


def load_episodes(directory: Path) -> dict[str, dict]:
    """rLLM's EpisodeLogger files under ``directory``, by episode id."""
    episodes: dict[str, dict] = {}
    for path in sorted(directory.rglob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            print(f"skipping {path.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        if isinstance(data, dict) and "episode_id" in data:
            episodes[str(data["episode_id"])] = data
    return episodes


def _replies_and_observations(episode: dict) -> tuple[list[str], list[str]]:
    """The episode's assistant replies in order and, for each, the user message that follows it ('' at the end)."""
    steps = [step for trajectory in episode.get("trajectories", []) for step in trajectory.get("steps", [])]
    if not steps:
        return [], []
    messages = steps[-1].get("chat_completions") or []
    replies = [str(step.get("model_response") or "") for step in steps]
    observations: list[str] = []
    assistant_at = [i for i, message in enumerate(messages) if message.get("role") == "assistant"]
    for k in range(len(replies)):
        after = assistant_at[k] + 1 if k < len(assistant_at) else len(messages)
        following = [m for m in messages[after:] if m.get("role") != "assistant"][:1]
        observations.append(str(following[0].get("content", "")) if following and k < len(replies) - 1 else "")
    return replies, observations


def same_text(trained: str, reply: str) -> bool:
    """Whether ``trained`` (tokens decoded one by one) is ``reply``: equal, or equal but where a multi-byte
    character split across tokens decodes to U+FFFD pieces on its own (each run of them stands for one
    or more non-ASCII characters of the reply)."""
    if trained == reply:
        return True
    if "\ufffd" not in trained:
        return False
    pattern = "".join("[^\\x00-\\x7f]+" if piece.startswith("\ufffd") else re.escape(piece)
                      for piece in re.split(r"(\ufffd+)", trained) if piece)
    return re.fullmatch(pattern, reply, re.S) is not None


def _strip_end(run: str) -> str:
    for end in END_TOKENS:
        if run.endswith(end):
            return run[: -len(end)]
    return run


def _first_difference(got: str, want: str) -> str:
    at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return f"at character {at}: trained {got[max(0, at - 20):at + 40]!r} vs reply {want[max(0, at - 20):at + 40]!r}"


def _conversation(episode: dict) -> list[dict]:
    steps = [step for trajectory in episode.get("trajectories", []) for step in trajectory.get("steps", [])]
    return list(steps[-1].get("chat_completions") or []) if steps else []


def check_rendering(row: PrintedRow, episode: dict, render) -> str:
    """'' when ``row`` is the episode's conversation as ``render(messages, add_generation_prompt)`` writes it
    (prompt: the messages before the first reply; response: the rest up to the last reply), else the problem."""
    messages = _conversation(episode)
    assistant_at = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if not assistant_at:
        return "the logged conversation has no reply"
    prompt = render(messages[: assistant_at[0]], True)
    if row.prompt != shown(prompt):
        return "prompt: " + _first_difference(row.prompt, shown(prompt)).replace("trained", "row").replace("vs reply", "vs template")
    whole = render(messages[: assistant_at[-1] + 1], False)
    rest = shown(whole[len(prompt):]) if whole.startswith(prompt) else None
    if rest is None:
        return "the template renders the first messages differently inside the whole conversation"
    response = "".join(text for _, text in row.runs)
    tail = rest[len(response):] if rest.startswith(response) else None
    if tail is None and "\ufffd" in response:  # split multi-byte characters: compare up to the end-of-turn tail
        tail = next((t for t in ROW_END_TAILS
                     if rest.endswith(t) and same_text(response, rest[: len(rest) - len(t)] if t else rest)), None)
    if tail is None or tail not in ROW_END_TAILS:
        return "response: " + _first_difference(response, rest).replace("trained", "row").replace("vs reply", "vs template")
    return ""


def check_row(row: PrintedRow, episode: dict, render=None) -> RowCheck:
    """Whether ``row``'s in-loss runs are a consecutive stretch of the episode's replies and, with ``render``,
    whether the row is the conversation token for token (see the module doc)."""
    replies, observations = _replies_and_observations(episode)
    loss = [(i, text) for i, (in_loss, text) in enumerate(row.runs) if in_loss]
    result = RowCheck(row.episode_id, row.line, len(replies), len(loss), ok=False)
    if not loss:
        result.problem = "no token of the row is in the loss"
        return result
    first = _strip_end(loss[0][1])
    starts = [k for k, reply in enumerate(replies) if same_text(first, shown(reply))]
    if not starts:
        nearest = min(range(len(replies)), key=lambda k: -len(_common_prefix(shown(replies[k]), first))) if replies else None
        result.problem = ("the first in-loss run is no reply of the episode; "
                          + (_first_difference(first, shown(replies[nearest])) if nearest is not None else "the episode has no replies"))
        return result
    start = starts[0]
    if start + len(loss) > len(replies):
        result.problem = f"{len(loss)} in-loss runs from turn {start} but the episode has {len(replies)} replies"
        return result
    for n, (run_index, text) in enumerate(loss):
        k = start + n
        if not same_text(_strip_end(text), shown(replies[k])):
            result.problem = f"turn {k}: " + _first_difference(_strip_end(text), shown(replies[k]))
            return result
        between = row.runs[run_index + 1][1] if run_index + 1 < len(row.runs) and n + 1 < len(loss) else None
        if between is not None and observations[k] and shown(observations[k]) not in between:
            result.problem = f"turn {k}: the masked tokens after the reply do not hold the next user message"
            return result
    if render is not None and start == 0:
        result.problem = check_rendering(row, episode, render)
        if result.problem:
            return result
    result.ok = True
    return result


def make_render(model_dir: Path):
    """``render(messages, add_generation_prompt)`` with the model's own chat template (unwrapped)."""
    from transformers import AutoTokenizer

    from terminal_agent.training.verl.rllm_chat_parser import original_chat_template

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    template = original_chat_template(tokenizer.chat_template)
    return lambda messages, generation: tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=generation, chat_template=template)


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("launch_log", type=Path)
    parser.add_argument("episode_dir", type=Path)
    parser.add_argument("--model", type=Path, help="the run's model folder: check each row against its chat template too")
    parser.add_argument("--json", type=Path, help="write every row's check here")
    args = parser.parse_args(argv)
    rows = parse_log(args.launch_log)
    episodes = load_episodes(args.episode_dir)
    render = make_render(args.model) if args.model else None
    checks: list[RowCheck] = []
    missing = 0
    for row in rows:
        if row.episode_id not in episodes:
            missing += 1
            continue
        checks.append(check_row(row, episodes[row.episode_id], render))
    bad = [c for c in checks if not c.ok]
    print(f"{len(rows)} rows printed, {len(episodes)} episodes logged, {len(checks)} rows checked "
          f"({missing} without a logged episode): {len(checks) - len(bad)} exact, {len(bad)} not")
    turns = sum(c.loss_runs for c in checks if c.ok)
    print(f"{turns} assistant turns trained exactly as sampled in the checked rows")
    for c in bad[:20]:
        print(f"  episode {c.episode_id} (log line {c.line}): {c.problem}")
    if args.json:
        args.json.write_text(json.dumps({"rows": len(rows), "episodes": len(episodes), "missing": missing,
                                         "checks": [asdict(c) for c in checks]}, indent=1))
    if not checks:
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
