"""The ``harbor`` grading mode: Harbor's verifier, the task's own ``tests/test.sh`` decides the reward.

``verifier`` holds the grader (``HarborGrader``) and the grading-mode table's entry (``harbor_grader``);
``reward_files`` reads the reward files as Harbor does; ``ctrf_scoring`` reads the CTRF report into per-test
outcomes and partial credit. The mode's settings are :mod:`terminal_agent.rewards.harbor_config` and its offline
runtime :mod:`terminal_agent.rewards.verifier_runtime` (both serve the weighted mode too). Importing this package
imports none of them.
"""
