"""Runs people can look at: eval runs and training rollouts written as Harbor 0.25 jobs with ATIF trajectories.

* :mod:`.records` - the typed record a trial is written from, read from a transcript (or a training episode);
* :mod:`.atif` - its ``agent/trajectory.json`` (ATIF v1.8);
* :mod:`.trial_files` - a trial folder (``config.json``, ``result.json``, ``agent/``, ``verifier/``);
* :mod:`.job_files` - a job folder (``config.json``, ``result.json`` with running stats);
* :mod:`.eval_jobs` - an eval run's directory as a job, live or converted afterwards;
* :mod:`.training_trials` - training rollouts, a job per step, with a retention policy: the local trainer writes
  them here, the verl backend through its own recorder (``training/verl/rllm_rollout_trials.py``, which also
  recomputes verl's advantages);
* :mod:`.viewer` - the stock Harbor venv and ``harbor view`` on 127.0.0.1.

Harbor itself (Python >= 3.12) is no dependency: the files are written here and checked against Harbor's own
models in the tests. See docs/harbor_jobs.md.
"""
