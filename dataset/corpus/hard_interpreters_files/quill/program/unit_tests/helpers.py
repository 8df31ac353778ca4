import io

from quill import run_source


def output_of(source):
    """What a program prints."""
    out = io.StringIO()
    run_source(source, out=out)
    return out.getvalue()
