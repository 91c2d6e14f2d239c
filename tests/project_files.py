"""The multi-file test projects under tests/projects/, read as path -> text (shared by tests)."""

from __future__ import annotations

import os

PROJECTS = os.path.join(os.path.dirname(__file__), "projects")


def load(name, replace=()):
    root = os.path.join(PROJECTS, name)
    files = {}
    for folder, _, names in os.walk(root):
        for file_name in sorted(names):
            path = os.path.join(folder, file_name)
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            for old, new in replace:
                text = text.replace(old, new)
            files[os.path.relpath(path, PROJECTS).replace(os.sep, "/")] = text
    return files
