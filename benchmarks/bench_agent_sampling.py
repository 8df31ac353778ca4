"""Sampling in the agent loop: a GRPO group of episodes, several turns each, through each sampler.

Every episode is a thread that does what the agent does: it asks for a reply, "runs" it (a
sleep drawn from a seeded distribution, standing in for the sandbox command), appends the reply
and an observation to its chat and asks again, for ``--turns`` turns. Every episode starts from
the project's real system prompt and its own task, so prompts share a long prefix and grow turn
by turn, and calls arrive at different times. Both samplers behind the client contract run the
same episodes in the same run:

- ``today's batched sampler`` (:class:`BatchedEmbeddedClient`): calls gathered into batches; a call
  that arrives while a batch decodes waits for the next one; every prompt is prefilled whole;
- ``continuous batching`` (:class:`ContinuousBatchingClient`): a call joins the running batch at the
  next step, and a prompt that extends an earlier one (or shares the system prompt) prefills only
  what is new.

Reported per sampler: sampled tokens per second of wall time (median of ``--rounds``), prompt
tokens run through the model, and the ratio against today's sampler.

    python benchmarks/bench_agent_sampling.py                      # CPU: a group of 8, 4 turns
    python benchmarks/bench_agent_sampling.py --device cuda --dtype bfloat16 --group 64
"""

from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Any

from terminal_agent.models.batched_generation import BatchedEmbeddedClient, BatchedGenerationConfig
from terminal_agent.models.continuous_batching import ContinuousBatchingClient, ContinuousBatchingConfig
from terminal_agent.models.embedded import ensure_embedded_model_cached

TASKS = [
    "Count the lines of /app/data.csv and write the number to /app/count.txt.",
    "Rename every .log file under /app/logs to .txt.",
    "Fix the syntax error in /app/script.sh so that it prints 'ok'.",
    "Write the largest number in /app/numbers.txt to /app/max.txt.",
    "Create /app/report.md with a header line '# Report'.",
    "Delete the empty files under /app/tmp.",
    "Sort /app/names.txt alphabetically into /app/sorted.txt.",
    "Make /app/run.sh executable and run it.",
]


def system_prompt() -> str:
    return resources.files("terminal_agent.prompts").joinpath("system_prompt.md").read_text()


def episode(client: Any, index: int, args: argparse.Namespace, tokens: list[int]) -> None:
    rng = random.Random(1000 * args.seed + index)
    chat = [{"role": "system", "content": system_prompt()},
            {"role": "user", "content": f"{TASKS[index % len(TASKS)]} (episode {index})"}]
    for turn in range(args.turns):
        reply = client.complete(chat, temperature=args.temperature, seed=1000 * index + turn, max_tokens=args.max_new_tokens)
        tokens[index] += len(reply.completion_ids)
        time.sleep(rng.uniform(args.command_s_min, args.command_s_max))  # the sandbox runs the command
        observation = f"exit code 0\nstdout:\n" + "\n".join(f"line {k}: value {rng.randint(0, 999)}" for k in range(8))
        chat = chat + [{"role": "assistant", "content": reply.text}, {"role": "user", "content": observation}]


def run_group(client: Any, args: argparse.Namespace) -> tuple[int, float]:
    tokens = [0] * args.group
    threads = [threading.Thread(target=episode, args=(client, i, args, tokens)) for i in range(args.group)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(tokens), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=None, help="A transformers directory (default: the embedded model).")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--group", type=int, default=8, help="Episodes at once.")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--command-s-min", type=float, default=0.1)
    parser.add_argument("--command-s-max", type=float, default=0.6)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = Path(args.model_dir) if args.model_dir else ensure_embedded_model_cached()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, args.dtype)).to(args.device).eval()
    samplers = {
        "today's batched sampler": BatchedEmbeddedClient(
            model, tokenizer, BatchedGenerationConfig(max_new_tokens=args.max_new_tokens, max_batch_size=args.group)),
        "continuous batching": ContinuousBatchingClient(
            model, tokenizer, ContinuousBatchingConfig(max_new_tokens=args.max_new_tokens, max_batch_size=args.group)),
    }
    print(f"{model_dir.name} on {args.device} ({args.dtype}), group {args.group}, {args.turns} turns, "
          f"{args.max_new_tokens} new tokens at most, commands {args.command_s_min}-{args.command_s_max} s")
    rates: dict[str, list[float]] = {name: [] for name in samplers}
    prefilled: dict[str, int] = {}
    for name, client in samplers.items():  # warm-up, not timed
        warm = argparse.Namespace(**{**vars(args), "turns": 1, "max_new_tokens": 4})
        run_group(client, warm)
    for _ in range(args.rounds):
        for name, client in samplers.items():  # interleaved, so load changes hit both
            before = getattr(client.stats, "prefill_tokens", None)
            tokens, wall = run_group(client, args)
            rates[name].append(tokens / wall)
            if before is not None:
                prefilled[name] = client.stats.prefill_tokens - before
    baseline = statistics.median(rates["today's batched sampler"])
    print(f"{'sampler':26} {'tokens/s (median)':>18} {'rounds':>22} {'vs today':>9} {'prompt tokens run':>18}")
    for name, values in rates.items():
        median = statistics.median(values)
        shown = ", ".join(f"{v:.1f}" for v in values)
        print(f"{name:26} {median:18.1f} {shown:>22} {median / baseline:8.2f}x {prefilled.get(name, '-'):>18}")
    for client in samplers.values():
        if hasattr(client, "close"):
            client.close()


if __name__ == "__main__":
    main()
