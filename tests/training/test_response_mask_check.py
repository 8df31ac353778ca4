"""The response-mask check of the verl run (training_scripts/device_run/check_response_masks.py), on rLLM's
own batch: episodes built as our Workflow's token path builds them, turned into a verl ``DataProto`` by
rLLM's ``transform_episodes_to_dataproto`` and printed by rLLM's ``visualize_trajectories``, in the verl
launch venv (verl 0.9.1 + rLLM HEAD; tests/training/response_mask_driver.py). It shows the bug it found on
the H200 run: with SmolLM2's own tokenizer (pad = eos = ``<|im_end|>``) rLLM masks every turn end as
padding; with the folder the launcher prepares (``prepare_model_dir_for_rllm``: another pad token) every
row is the conversation token for token. A reply token out of the loss, or an observation token in it,
fails the check.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from test_verl_rehearsal import verl_launch_python  # noqa: F401  (the venv fixture)

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("response_mask_driver.py")
spec = importlib.util.spec_from_file_location("check_response_masks", REPO / "training_scripts/device_run/check_response_masks.py")
check_response_masks = importlib.util.module_from_spec(spec)
sys.modules["check_response_masks"] = check_response_masks
spec.loader.exec_module(check_response_masks)


CASES = ["none:prepared", "none:original", "drop-reply-token:prepared", "train-observation:prepared"]


@pytest.fixture(scope="module")
def printed_cases(verl_launch_python, tmp_path_factory) -> Path:  # noqa: F811
    """Every case's launch log and episodes, from one driver process (verl imports once)."""
    out = tmp_path_factory.mktemp("response-masks")
    done = subprocess.run([verl_launch_python, str(DRIVER), str(out), *CASES], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _check(printed_cases: Path, case: str, capsys) -> tuple[int, str]:
    from terminal_agent.models.embedded import ensure_embedded_model_cached

    folder = printed_cases / case.replace(":", "-")
    code = check_response_masks.main([str(folder / "launch.log"), str(folder / "episodes"), "--model",
                                      str(ensure_embedded_model_cached())])
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_rows_of_the_prepared_tokenizer_are_the_conversation_token_for_token(printed_cases, capsys):
    code, out = _check(printed_cases, "none:prepared", capsys)
    assert code == 0, out
    assert "3 rows checked (0 without a logged episode): 3 exact, 0 not" in out
    assert "6 assistant turns trained exactly as sampled" in out


@pytest.mark.slow
def test_the_models_own_pad_token_masks_every_turn_end_and_the_check_says_so(printed_cases, capsys):
    code, out = _check(printed_cases, "none:original", capsys)
    assert code == 1
    assert "0 exact, 3 not" in out
    assert "Linux shell.<|im_end|>" in out  # the template's turn end, missing from the row


@pytest.mark.slow
@pytest.mark.parametrize(("mutation", "problem"), [
    ("drop-reply-token", "the first in-loss run is no reply of the episode"),
    ("train-observation", "4 in-loss runs from turn 0 but the episode has 3 replies"),
])
def test_a_wrong_mask_fails_the_check_naming_the_episode(printed_cases, capsys, mutation, problem):
    code, out = _check(printed_cases, f"{mutation}:prepared", capsys)
    assert code == 1
    assert "2 exact, 1 not" in out
    assert "episode task-0:0" in out and problem in out


def test_parse_runs_merges_tokens_by_mask_and_refuses_an_unknown_style():
    line = "\x1b[2ma\x1b[0m\x1b[2mb\x1b[0m\x1b[34mc\x1b[0m\x1b[34m\x1b[42md\x1b[0m\x1b[2m\\n\x1b[0m"
    assert check_response_masks.parse_runs(line) == [(False, "ab"), (True, "cd"), (False, "\\n")]
    with pytest.raises(ValueError, match="neither in the loss"):
        check_response_masks.parse_runs("\x1b[31mx\x1b[0m")


def test_a_ray_prefixed_colored_line_and_split_multibyte_characters_are_read_as_the_run_printed_them():
    line = "\x1b[36m(TaskRunner pid=7654)\x1b[0m \x1b[34mh\x1b[0m\x1b[34m\ufffd\x1b[0m\x1b[34m\ufffd\x1b[0m\x1b[34mi\x1b[0m"
    assert check_response_masks._clean(line) == line.split(" ", 2)[2]
    assert check_response_masks.parse_runs(check_response_masks._clean(line)) == [(True, "h\ufffd\ufffdi")]
    assert check_response_masks.same_text("h\ufffd\ufffdi", "h\u0451i")  # one Cyrillic letter split over two tokens
    assert not check_response_masks.same_text("h\ufffd\ufffdi", "hxi")  # an ASCII letter never decodes to U+FFFD
    assert not check_response_masks.same_text("h\ufffdj", "h\u0451i")


@pytest.mark.slow
def test_other_processes_lines_between_a_rows_separator_and_its_response_are_skipped(printed_cases, capsys, tmp_path):
    # Ray prints every worker into one log: on the H200 run of 2026-12-05 the next step's progress bar landed
    # between the last row's separator and its response, and the row was read as having nothing in the loss
    from terminal_agent.models.embedded import ensure_embedded_model_cached

    source = printed_cases / "none-prepared"
    prefix = "\x1b[36m(TaskRunner pid=4151)\x1b[0m "
    foreign = [prefix + "\rGenerating trajectories:   0%|          | 0/64 [00:00<?, ?it/s]",
               prefix + "\x1b[33m[task-9:1] Rollout completed. Rewards: ['terminal_agent: 0.0'], Termination: "
                        "TerminationReason.ENV_DONE\x1b[0m",
               prefix + "step:3 - global_seqlen/min:48074 - actor/entropy:0.57"]
    lines = []
    for line in (source / "launch.log").read_text().splitlines():
        lines.append(line)
        if line.strip().endswith("-" * 16):
            lines.extend(foreign)
    (tmp_path / "launch.log").write_text("\n".join(lines) + "\n")
    code = check_response_masks.main([str(tmp_path / "launch.log"), str(source / "episodes"), "--model",
                                      str(ensure_embedded_model_cached())])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "3 rows checked (0 without a logged episode): 3 exact, 0 not" in out
