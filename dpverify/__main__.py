"""``python -m dpverify ...``: the ``dpverify`` command, for environments where the console
script is not on PATH (same options, output and exit codes)."""
from .cli import run

if __name__ == "__main__":
    run()
