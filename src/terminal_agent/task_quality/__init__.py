"""Task quality: oracle validation and difficulty screening of tasks.

These run episodes through :mod:`terminal_agent.rollout`, which itself reads
:mod:`terminal_agent.tasks`; keeping them out of ``tasks/`` keeps the package graph acyclic
(``task_quality`` -> ``rollout`` -> ``tasks``).
"""
