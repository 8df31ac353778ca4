"""Rebuild a judge benchmark report from its results.json alone (same as ``terminal-agent judge report``).

    python evaluation/llm_as_a_judge_evals/report.py runs/judges/results.json -o runs/judges/report.md
"""

import sys

from terminal_agent.cli import main

if __name__ == "__main__":
    sys.argv = [sys.argv[0], "judge", "report", *sys.argv[1:]]
    main()
