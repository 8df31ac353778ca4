from pathlib import Path


def test_file_exists():
    assert Path("/app/greeting.txt").is_file()


class TestContent:
    def test_text(self):
        assert Path("/app/greeting.txt").read_text() == "hello, world\n"
