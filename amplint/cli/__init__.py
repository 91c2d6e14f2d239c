"""Entry points: the `amplint` command (`main.py`), `python -m amplint`, the flake8 plugin, stdin and
the language server (`amplint server`). Nothing is imported here, so the flake8 plugin and the
server load only what they use."""
