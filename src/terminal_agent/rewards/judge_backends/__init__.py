"""The built-in judge backends, one module each, registered by one line of
:data:`terminal_agent.rewards.judge.JUDGE_BACKENDS` and imported on first use.

Heavy dependencies (litellm, torch) are imported only when a backend is built.
"""
