"""The ``local`` trainer backend: the project's single-machine GRPO trainer (LoRA on the policy, rollouts through
the real agent, env and grader, in this process).

``backend`` holds the registry entry (``LocalBackend``); ``config`` the trainer's typed settings and how a preset
maps onto them; ``trainer`` the loop (``train_local``, ``run_local_training``) with its parts: ``policy`` and
``models`` (the model with its adapter, and its sampling client), ``rollouts``, ``update``, ``validation``,
``sft_warm_start`` with ``demonstration_client``, ``checkpoints`` and ``metrics``; ``model_export`` merges a
checkpoint's adapter into a plain transformers directory. Importing this package imports none of them.
"""
