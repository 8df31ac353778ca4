"""Benchmark judges on the cases in ``cases/`` (same as ``terminal-agent judge eval``).

    python evaluation/llm_as_a_judge_evals/judge_eval.py --judge local -k 3
    python evaluation/llm_as_a_judge_evals/judge_eval.py --judge litellm:openai/gpt-4o-mini --judge claude-cli:sonnet -k 5 -o runs/judges
"""

import sys
from pathlib import Path

from terminal_agent.cli import main

if __name__ == "__main__":
    arguments = sys.argv[1:]
    if "--cases" not in arguments:
        arguments += ["--cases", str(Path(__file__).resolve().parent / "cases")]
    sys.argv = [sys.argv[0], "judge", "eval", *arguments]
    main()
