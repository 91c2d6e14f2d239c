"""Entry points: the `amplint` command, `python -m amplint`, the flake8 plugin, stdin and the
language server (`amplint server`)."""
