"""The ``verl`` trainer backend: rLLM + verl on GPUs (Ray workers, vLLM sampling), with our rLLM Workflow.

``backend`` holds the registry entry (``VerlBackend``); ``launch`` is the backend's half of a launch (its plan,
its dry-run keys, the launch itself), with ``machine_checks`` (packages, GPUs, Ray, sandbox slots, wandb; what
``ray.init`` gets), ``data_files`` (the run's train/val tasks and their parquet) and ``worker_environment`` (the
variables every process of the run gets, NVLink multicast off); ``overrides`` maps a preset
onto rLLM/verl hydra keys and splits a command line's raw keys; ``schema`` composes and validates them against
the real YAML (level 1) and verl's own checks (level 2, ``config_check``, also run as a script in another
interpreter); ``rllm_workflow`` (``TerminalTaskWorkflow``), ``rllm_engines`` and ``rllm_chat_parser`` are what
rLLM runs, and ``rllm_rollout_trials`` keeps the Workflow's training episodes as Harbor jobs with the advantages
verl computed for them (recomputed: verl hands them back to no one); ``stall_watchdog`` stops a run that no
longer logs steps; ``checkpoint_export`` turns a verl FSDP checkpoint into a plain transformers directory;
``packed_attention`` is the attention verl's workers import for padding-free rows without flash-attn (torch's
varlen kernels), and ``attention_checks`` says whether a machine can run the attention a preset picks. Importing
this package imports none of them (the rLLM modules need rLLM installed).
"""
