"""Real code to measure on: the Python sources of registry packages, downloaded once.

`tree_for("mmdet==2.28.2")` runs `pip download --no-deps` (wheel or sdist) and unpacks the
`.py` files into benchmarks/.corpus/sweep/<name>/ (git-ignored; never committed)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SWEEP = os.path.join(HERE, ".corpus", "sweep")


def tree_for(spec: str) -> str:
    """The unpacked `.py` files of one package, downloaded on first use."""
    name = spec.split("==")[0]
    target = os.path.join(SWEEP, name)
    if os.path.isdir(target):
        return target
    with tempfile.TemporaryDirectory() as download:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "-d", download, spec], check=True)
        os.makedirs(target)
        for archive in glob.glob(os.path.join(download, "*")):
            if archive.endswith(".whl"):
                with zipfile.ZipFile(archive) as handle:
                    for member in handle.namelist():
                        if member.endswith(".py"):
                            handle.extract(member, target)
            elif archive.endswith((".tar.gz", ".tgz")):
                with tarfile.open(archive) as handle:
                    members = [m for m in handle.getmembers()
                               if m.isfile() and m.name.endswith(".py")]
                    handle.extractall(target, members=members, filter="data")
    return target


def python_files(root: str):
    found = []
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        found.extend(os.path.join(directory, f) for f in sorted(files) if f.endswith(".py"))
    return found
