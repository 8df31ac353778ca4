"""Training: presets, their launch, and the trainers behind them.

Shared: ``preset_config`` (the sections every backend reads; the YAML files are in ``presets/``),
``episode_args`` (the env, agent and episode arguments of a preset), ``launcher`` with ``launch_plan``
(validate, show and launch a preset), ``launch_environment`` (what every launch sets up: the
objects it loads, the export its sandboxes read), ``redaction`` (secrets kept out of the dry run),
``train_splits`` (where a run's tasks come from),
``trainer_registry`` and ``trainer_backends`` (the table of backends and what each provides), and
``algorithms/`` (advantage estimators, policy losses, KL estimators: registries the presets name). Each backend
is a sub-package with its own preset keys (``preset_sections``): ``local/`` (the single-machine trainer) and
``verl/`` (rLLM + verl, with the rLLM Workflow and its GPU ``geometry_checks``).
``experiments/`` holds the research drivers, which are not library.
"""
