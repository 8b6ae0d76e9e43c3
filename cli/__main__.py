"""``python -m cli``: the same as the ``ocrgw`` command."""

from cli.main import main

main(prog_name="ocrgw")
