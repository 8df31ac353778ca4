"""terminal-agent: train LLM agents with reinforcement learning on terminal tasks.

The parts a newcomer needs are named in :mod:`terminal_agent.interfaces`.
"""

__version__ = "0.1.0"
