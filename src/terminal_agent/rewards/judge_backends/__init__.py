"""The built-in judge backends, one module each, registered by name in ``JUDGE_BACKENDS`` on import.

Heavy dependencies (litellm, torch) are imported only when a backend is built.
"""

from terminal_agent.rewards.judge_backends import claude_cli_judge, litellm_judge, local_judge, no_judge

__all__ = ["claude_cli_judge", "litellm_judge", "local_judge", "no_judge"]
