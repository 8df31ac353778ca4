"""Run verl 0.9.1's own core_algos functions on cases from a file (in a subprocess of the tests).

Usage: python verl_reference_runner.py CASES.pt RESULTS.pt, or ``--serve`` to answer one
``CASES.pt RESULTS.pt`` line of stdin after another (verl imported once for a whole test session), with
PYTHONPATH pointing at the private verl install made by scripts/setup_verl_reference.sh. Each case is a dict with a
``kind``; each result is what verl returned for it.
"""

import sys

import numpy as np
import torch
from omegaconf import OmegaConf

from verl.trainer.ppo import core_algos


def run(case):
    kind = case["kind"]
    if kind == "grpo":
        adv, _ = core_algos.compute_grpo_outcome_advantage(
            token_level_rewards=case["token_level_rewards"],
            response_mask=case["response_mask"],
            index=np.asarray(case["index"], dtype=object),
            epsilon=case["epsilon"],
            norm_adv_by_std_in_grpo=case["norm_by_std"],
        )
        return adv
    if kind == "agg":
        return core_algos.agg_loss(
            loss_mat=case["loss_mat"],
            loss_mask=case["mask"],
            loss_agg_mode=case["mode"],
            **case.get("global", {}),
        )
    if kind == "policy_loss":
        config = OmegaConf.create(
            {
                "clip_ratio": 0.2,
                "clip_ratio_low": case["clip_ratio_low"],
                "clip_ratio_high": case["clip_ratio_high"],
                "clip_ratio_c": case["clip_ratio_c"],
                "global_batch_info": case.get("global", {}),
            }
        )
        loss, metrics = core_algos.compute_policy_loss_vanilla(
            old_log_prob=case["old"],
            log_prob=case["new"],
            advantages=case["adv"],
            response_mask=case["mask"],
            loss_agg_mode=case["mode"],
            config=config,
        )
        return {"loss": loss, **metrics}
    if kind == "kl":
        return core_algos.kl_penalty(case["logprob"], case["ref_logprob"], case["kl_penalty"])
    raise ValueError(f"unknown case kind {kind!r}")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        cases = torch.load(sys.argv[1], weights_only=False)
        torch.save([run(c) for c in cases], sys.argv[2])
    else:  # --serve: one "CASES.pt RESULTS.pt" line per batch on stdin, "done" on stdout after each
        for line in sys.stdin:
            cases_path, results_path = line.split()
            torch.save([run(c) for c in torch.load(cases_path, weights_only=False)], results_path)
            print("done", flush=True)
