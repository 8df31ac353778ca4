from pathlib import Path


def test_sum_file():
    assert Path("/app/sum.txt").read_text().strip() == "6"
