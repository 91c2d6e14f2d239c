"""Entry points: the `amplint` command, `python -m amplint`, the flake8 plugin, stdin and the
language server (`amplint server`)."""

from amplint.cli.main import cli, main

__all__ = ["cli", "main"]
