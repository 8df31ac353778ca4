"""Driver of test_response_mask_check.py, run in the verl launch venv (verl 0.9.1 + rLLM HEAD).

Builds three multi-turn episodes the way our Workflow's token-in-token-out path builds them (the real
embedded tokenizer, our chat parser and ``TurnPromptBuilder``: each turn's prompt extends the last turn's
prompt and sampled ids), turns them into a verl ``DataProto`` with rLLM's own
``transform_episodes_to_dataproto`` (what ``AgentWorkflowEngine.transform_results_for_verl`` calls),
logs them with rLLM's ``EpisodeLogger`` and prints every row with rLLM's ``visualize_trajectories``,
each line prefixed as Ray prefixes a worker's output. ``MUTATION`` (argv[3]) damages the batch first:
``none``, ``drop-reply-token`` (one reply token out of the loss) or ``train-observation`` (one token of
an observation into the loss). ``TOKENIZER`` (argv[4]): ``original`` (the embedded model's folder, pad =
``<|im_end|>``) or ``prepared`` (``prepare_model_dir_for_rllm``'s folder, what the launcher points verl at).

    python response_mask_driver.py OUT_DIR MUTATION:TOKENIZER [MUTATION:TOKENIZER ...]

Each case writes ``OUT_DIR/MUTATION-TOKENIZER/launch.log`` and ``.../episodes`` (one process: verl imports once).
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path
from types import SimpleNamespace

from rllm.agents.agent import Episode, Step, Trajectory
from rllm.engine.rollout.rollout_engine import ModelOutput
from rllm.trainer.verl.transform import transform_episodes_to_dataproto
from rllm.utils.episode_logger import EpisodeLogger
from rllm.utils.visualization import visualize_trajectories
from transformers import AutoTokenizer

from terminal_agent.models.embedded import ensure_embedded_model_cached
from terminal_agent.training.verl.rllm_chat_parser import TurnPromptBuilder, chat_parser_for, prepare_model_dir_for_rllm

REPLIES = [
    ["```bash\nls -la /app\n```", "```bash\nsort -u data.txt > out.txt\n```", "Done: out.txt holds the sorted lines.\tok"],
    ["```bash\ncat notes.md | head -n 3\n```", "I will stop here."],
    ["```bash\necho 'a\\nb' > x\n```"],
]
OBSERVATIONS = ["total 8\ndrwxr-xr-x 2 root root 4096 data.txt", "exit code 0 (no output)", "# Notes\nline two\n"]


def episode(index: int, replies: list[str], tokenizer, parser) -> Episode:
    builder = TurnPromptBuilder(parser, tokenizer)
    messages = [{"role": "system", "content": "You work in a Linux shell."},
                {"role": "user", "content": f"Task {index}: sort data.txt into out.txt."}]
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    steps = []
    for turn, reply in enumerate(replies):
        prompt_ids = builder.prompt_ids(messages)
        completion_ids = tokenizer.encode(reply, add_special_tokens=False) + [end]  # as the sampler returns it
        builder.record(messages, prompt_ids, completion_ids)
        messages = messages + [{"role": "assistant", "content": reply}]
        if turn < len(replies) - 1:
            messages = messages + [{"role": "user", "content": OBSERVATIONS[turn]}]
        output = ModelOutput(text=reply, content=reply, prompt_ids=prompt_ids, completion_ids=completion_ids,
                             logprobs=[-0.5] * len(completion_ids), prompt_length=len(prompt_ids),
                             completion_length=len(completion_ids), finish_reason="stop")
        steps.append(Step(chat_completions=[dict(m) for m in messages], model_response=reply, model_output=output,
                          prompt_ids=prompt_ids, response_ids=completion_ids, logprobs=output.logprobs, reward=0.0))
    steps[-1].reward, steps[-1].done = 1.0, True
    trajectory = Trajectory(name="terminal_agent", steps=steps, reward=1.0)
    return Episode(id=f"task-{index}:0", task={"task_id": f"task-{index}"}, trajectories=[trajectory], is_correct=True)


def write_case(out: Path, mutation: str, which: str) -> None:
    log, episode_dir = out / "launch.log", out / "episodes"
    model_dir = Path(ensure_embedded_model_cached())
    if which == "prepared":
        model_dir = prepare_model_dir_for_rllm(model_dir, out / "model_for_rllm")
    elif which != "original":
        raise SystemExit(f"unknown tokenizer {which!r}")
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    parser = chat_parser_for(tokenizer)
    episodes = [episode(i, replies, tokenizer, parser) for i, replies in enumerate(REPLIES)]
    logger = EpisodeLogger(base_dir=str(episode_dir), subdirectory="episodes")
    for e in episodes:
        logger.log_episode(e, step=1)
    batch = transform_episodes_to_dataproto(episodes, SimpleNamespace(tokenizer=tokenizer, processor=None), 1280, 2816)
    mask = batch.batch["response_mask"]
    row_of = {eid: i for i, eid in enumerate(batch.non_tensor_batch["episode_ids"])}
    row = row_of["task-0:0"]
    in_loss = mask[row].nonzero().flatten().tolist()
    if mutation == "drop-reply-token":
        mask[row, in_loss[2]] = 0
    elif mutation == "train-observation":
        gap = next(i for i in range(in_loss[0], in_loss[-1]) if not mask[row, i])  # the first masked token after reply 0
        mask[row, gap + 3] = 1
    elif mutation != "none":
        raise SystemExit(f"unknown mutation {mutation!r}")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        visualize_trajectories(batch=batch, tokenizer=tokenizer, sample_indices=list(range(len(batch))),
                               mask_key="response_mask", reward_key="traj_rewards", show_workflow_metadata=True)
    log.write_text("".join(f"(TaskRunner pid=4242) {line}\n" for line in printed.getvalue().splitlines()))
    print(f"{out.name}: tokenizer pad {tokenizer.pad_token!r}; rows {len(batch)}, response width "
          f"{batch.batch['responses'].shape[1]}, in-loss tokens {int(mask.sum())}")


def main() -> int:
    out_dir = Path(sys.argv[1])
    for case in sys.argv[2:]:
        mutation, _, which = case.partition(":")
        out = out_dir / f"{mutation}-{which}"
        out.mkdir(parents=True, exist_ok=True)
        write_case(out, mutation, which)
    return 0


if __name__ == "__main__":
    sys.exit(main())
