"""Bad input through the CLI (issue 7): every odd file gives one line naming it, the run goes on
to the other files, the exit status says something was wrong, and no file is ever truncated or
half-written (atomic replace, mode, encoding, BOM and newline style kept)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner

import amplint.workspace.files
import amplint.run.fixing
from amplint.cli.main import cli

# A file with a safe fix (AMP121: scaler.update() added after scaler.step).
SOURCE = (
    "import torch\n"
    "scaler = torch.amp.GradScaler('cuda')\n"
    "for x in loader:\n"
    "    with torch.autocast('cuda'):\n"
    "        loss = model(x)\n"
    "    scaler.scale(loss).backward()\n"
    "    scaler.step(opt)\n"
)
FIXED = SOURCE + "    scaler.update()\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args):
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def entries(folder):
    """The folder's entries, amplint's own cache folder left out."""
    return sorted(p.name for p in folder.iterdir() if p.name != ".amplint_cache")


def error_lines(result, name):
    return [line for line in result.stderr.splitlines() if name in line]


def fix_with_good_neighbour(project, name, data, *extra):
    """Write `name` (bytes) and a fixable good.py next to it, run `--fix` on the folder."""
    path = project / name
    path.write_bytes(data)
    (project / "good.py").write_text(SOURCE)
    result = invoke("--fix", *extra, ".")
    # The run went on: the good file was fixed.
    assert (project / "good.py").read_text() == FIXED
    return result, path


# -- files that cannot be linted: one line naming them, exit 1, untouched ---------------------

@pytest.mark.parametrize("name, data, expect", [
    ("syntax.py", b"import torch\nwith torch.autocast('cuda')\n    x = 1\n", "syntax error"),
    ("py2.py", b"import torch\nprint 'autocast'\nexec 'x = 1'\n", "syntax error"),
    ("latin1.py", "# café autocast\n".encode("latin-1") + SOURCE.encode(), "not valid UTF-8"),
    ("binary.py", b"\x7fELF\x02\x01\x01\x00\x00autocast\x00\xff\xfe", "not a text file"),
    ("badcookie.py", b"# -*- coding: no-such-codec -*-\nimport torch\n", "encoding"),
])
def test_unlintable_file_is_named_on_one_line_and_left_alone(project, name, data, expect):
    result, path = fix_with_good_neighbour(project, name, data)
    lines = error_lines(result, name)
    assert len(lines) == 1 and expect in lines[0], result.stderr
    assert lines[0].startswith(f"error: {name}")
    assert result.exit_code == 1
    assert path.read_bytes() == data


def test_a_syntax_error_without_amp_terms_is_reported_too(project):
    """The prefilter skips the LibCST parse of a file without AMP terms, but Python's parser
    still checks it: a broken file never passes as clean."""
    (project / "plain.py").write_text("def broken(:\n    pass\n")
    result = invoke(".")
    assert error_lines(result, "plain.py") == ["error: plain.py:1:12: syntax error: invalid syntax"]
    assert result.exit_code == 1


def test_empty_file(project):
    (project / "empty.py").write_bytes(b"")
    result = invoke("--fix", "--unsafe-fixes", "--select", "ALL", ".")
    assert result.exit_code == 0, result.output
    assert (project / "empty.py").read_bytes() == b""


# -- files amplint can fix: encodings and newline styles kept ----------------------------------

@pytest.mark.parametrize("name, transform", [
    ("bom.py", lambda s: b"\xef\xbb\xbf" + s.encode()),
    ("crlf.py", lambda s: s.replace("\n", "\r\n").encode()),
    ("tabs.py", lambda s: s.replace("    ", "\t").encode()),
    ("cookie.py", lambda s: ("# -*- coding: latin-1 -*-\n# café\n" + s).encode("latin-1")),
    ("bom_crlf.py", lambda s: b"\xef\xbb\xbf" + s.replace("\n", "\r\n").encode()),
    ("no_final_newline.py", lambda s: s.rstrip("\n").encode()),
])
def test_fix_keeps_encoding_bom_and_newlines(project, name, transform):
    data = transform(SOURCE)
    path = project / name
    path.write_bytes(data)
    result = invoke("--fix", name)
    assert result.exit_code == 0, result.output
    expected = transform(FIXED)  # (no_final_newline: the new last line has none either)
    assert path.read_bytes() == expected
    assert invoke("--fix", name).exit_code == 0 and path.read_bytes() == expected


def test_mixed_newlines_never_corrupted(project):
    """Python accepts a file mixing CRLF and LF; whatever amplint does, the bytes stay."""
    data = SOURCE.replace("\n", "\r\n", 3).encode()
    result, path = fix_with_good_neighbour(project, "mixed.py", data)
    fixed = path.read_bytes()
    assert fixed in (data, data + b"    scaler.update()\n", data + b"    scaler.update()\r\n")
    if fixed == data:  # not fixed: then it must say so
        assert len(error_lines(result, "mixed.py")) == 1 and result.exit_code == 1


def test_mixed_newlines_are_linted_like_any_file(project):
    data = SOURCE.replace("\n", "\r\n", 3).encode()
    compile(data, "mixed.py", "exec")
    (project / "mixed.py").write_bytes(data)
    result = invoke("mixed.py")
    assert "syntax error" not in result.stderr
    assert "AMP121" in result.stdout


@pytest.mark.slow
def test_ten_megabyte_file(project):
    """A generated 10 MB file (the hazard, then 10 MB of comment lines) is fixed, and every
    other byte of it kept."""
    filler = ("# " + "x" * 97 + "\n") * (10 * 1024 * 1024 // 100)
    path = project / "huge.py"
    path.write_text(SOURCE + filler)
    result = invoke("--fix", "huge.py")
    assert result.exit_code == 0, result.output[-2000:]
    assert path.read_text() == FIXED + filler


def test_paths_with_spaces_and_non_ascii_names(project):
    folder = project / "my code" / "données"
    folder.mkdir(parents=True)
    path = folder / "entraîner un modèle.py"
    path.write_text(SOURCE)
    result = invoke("my code")
    assert result.exit_code == 1
    assert os.path.join("my code", "données", "entraîner un modèle.py") + ":7:5: AMP121" in result.stdout
    assert invoke("--fix", "my code").exit_code == 0
    assert path.read_text() == FIXED


# -- the file system -----------------------------------------------------------------------------

def test_directory_symlink_loop_terminates(project):
    (project / "pkg").mkdir()
    (project / "pkg" / "train.py").write_text(SOURCE)
    os.symlink("..", project / "pkg" / "loop")
    os.symlink(project / "pkg", project / "pkg" / "self")
    result = invoke("--output-format", "json", "pkg")
    assert result.exit_code == 1
    assert result.stdout.count('"code": "AMP121"') == 1  # found once, not through the loops
    assert invoke("--fix", "pkg").exit_code == 0
    assert (project / "pkg" / "train.py").read_text() == FIXED


def test_unreadable_file(project, monkeypatch):
    """An unreadable file (simulated: tests often run as root, who reads everything)."""
    path = project / "secret.py"
    path.write_text(SOURCE)
    real_open = open

    def guarded_open(file, *args, **kwargs):
        if os.path.basename(str(file)) == "secret.py":
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(amplint.workspace.files, "open", guarded_open, raising=False)
    result, _ = fix_with_good_neighbour(project, "secret.py", SOURCE.encode())
    lines = error_lines(result, "secret.py")
    assert lines == ["error: secret.py: cannot read: Permission denied"]
    assert result.exit_code == 1
    monkeypatch.undo()
    assert path.read_text() == SOURCE


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_for_real(project):
    path = project / "secret.py"
    path.write_text(SOURCE)
    path.chmod(0)
    try:
        result, _ = fix_with_good_neighbour(project, "secret.py", SOURCE.encode())
        assert any("cannot read" in l for l in error_lines(result, "secret.py"))
        assert result.exit_code == 1
    finally:
        path.chmod(0o644)
    assert path.read_text() == SOURCE


def test_dangling_symlink(project):
    os.symlink("nowhere.py", project / "dangling.py")
    result, _ = fix_with_good_neighbour(project, "other.py", b"")
    assert error_lines(result, "dangling.py") == [
        "error: dangling.py: cannot read: No such file or directory"
    ]
    assert result.exit_code == 1


def test_read_only_file_under_fix(project):
    path = project / "frozen.py"
    path.write_text(SOURCE)
    path.chmod(0o444)
    result, _ = fix_with_good_neighbour(project, "frozen.py", SOURCE.encode())
    assert error_lines(result, "frozen.py") == ["error: frozen.py: file is read-only; not changed"]
    assert result.exit_code == 1
    assert path.read_text() == SOURCE and stat.S_IMODE(path.stat().st_mode) == 0o444
    # Nothing was written, so the finding is still reported as such.
    assert "frozen.py:7:5: AMP121" in result.stdout


def test_fix_replaces_atomically_keeping_mode_and_symlinks(project):
    target = project / "real.py"
    target.write_text(SOURCE)
    target.chmod(0o754)
    os.symlink("real.py", project / "link.py")
    inode = target.stat().st_ino
    assert invoke("--fix", "link.py").exit_code == 0
    assert os.path.islink(project / "link.py")
    assert target.read_text() == FIXED
    assert stat.S_IMODE(target.stat().st_mode) == 0o754
    assert target.stat().st_ino != inode  # a new file renamed over the old one
    assert entries(project) == ["link.py", "pyproject.toml", "real.py"]


def test_a_failed_write_leaves_the_file_whole(project, monkeypatch):
    """The disk fills up / the rename fails halfway: the original stays, no temp file is left."""
    path = project / "train.py"
    path.write_text(SOURCE)

    def failing_replace(src, dst, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(amplint.workspace.files.os, "replace", failing_replace)
    result = invoke("--fix", "train.py")
    monkeypatch.undo()
    assert error_lines(result, "train.py")[0] == "error: train.py: cannot write: No space left on device"
    assert result.exit_code == 1
    assert path.read_text() == SOURCE
    assert entries(project) == ["pyproject.toml", "train.py"]


# -- the file changes between read and write ---------------------------------------------------

def _between_read_and_write(monkeypatch, action):
    """Run `action(path)` after amplint read the file and computed its fixes, before it
    writes (the engine call sits between the two)."""
    real = amplint.run.fixing.lint_source

    def lint_then_act(path, text, settings, fix=False, **kwargs):
        result = real(path, text, settings, fix=fix, **kwargs)
        if fix:
            action(path)
        return result

    monkeypatch.setattr(amplint.run.fixing, "lint_source", lint_then_act)


def test_file_deleted_between_read_and_write(project, monkeypatch):
    path = project / "train.py"
    path.write_text(SOURCE)
    _between_read_and_write(monkeypatch, os.remove)
    result = invoke("--fix", "train.py")
    assert error_lines(result, "train.py")[0].startswith("error: train.py: cannot re-read")
    assert result.exit_code == 1
    assert not path.exists()  # not resurrected with stale content
    assert entries(project) == ["pyproject.toml"]


def test_file_modified_between_read_and_write(project, monkeypatch):
    path = project / "train.py"
    path.write_text(SOURCE)
    edited = SOURCE + "print('the user saved this meanwhile')\n"
    _between_read_and_write(monkeypatch, lambda p: open(p, "w").write(edited))
    result = invoke("--fix", "train.py")
    assert error_lines(result, "train.py") == [
        "error: train.py: changed on disk since it was read; not overwritten"
    ]
    assert result.exit_code == 1
    assert path.read_text() == edited  # the user's edit wins


def test_bad_inputs_through_a_real_process(project):
    """The same through `python -m amplint` in a subprocess: several bad files in one run."""
    (project / "syntax.py").write_text("import torch\nwith torch.autocast('cuda')\n")
    (project / "binary.py").write_bytes(b"\0\0autocast")
    (project / "latin1.py").write_bytes("# é autocast\n".encode("latin-1"))
    (project / "good.py").write_text(SOURCE)
    before = {p.name: p.read_bytes() for p in project.glob("*.py") if p.name != "good.py"}
    proc = subprocess.run(
        [sys.executable, "-m", "amplint", "--fix", "."], cwd=project, capture_output=True,
        text=True, timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 3 and "Traceback" not in proc.stderr
    for name in ("syntax.py", "binary.py", "latin1.py"):
        assert sum(name in line for line in errors) == 1
    assert (project / "good.py").read_text() == FIXED
    assert {p.name: p.read_bytes() for p in project.glob("*.py") if p.name != "good.py"} == before


def test_diff_of_a_file_with_many_repeated_lines_stays_small(project):
    (project / "rep.py").write_text(SOURCE + "# same\n" * 3000)
    result = invoke("--diff", "rep.py")
    assert "+    scaler.update()" in result.stdout
    assert len(result.stdout.splitlines()) < 20


def test_parsing_skips_only_the_validation_of_parsed_nodes():
    # the parser's own nodes are valid by construction; a node made by hand (a fix) is checked
    import libcst as cst

    from amplint.analysis.parsing import parse

    module = parse("x = torch.zeros(3)  # keep\n")
    assert module.code == "x = torch.zeros(3)  # keep\n"
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
    with pytest.raises(cst.ParserSyntaxError):
        parse("def broken(:\n")
    with pytest.raises(cst.CSTValidationError):  # still checked after a failed parse
        cst.Name("not a name")


def test_parsing_in_threads_leaves_validation_on():
    import threading

    import libcst as cst

    from amplint.analysis.parsing import parse

    text = "import torch\n" + "x = torch.zeros(3)\n" * 200
    threads = [threading.Thread(target=lambda: [parse(text) for _ in range(10)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_a_tree_libcst_itself_rejects_is_a_parse_error_not_an_internal_one():
    # valid Python from which LibCST 1.x builds a node its own validation rejects (LibCST
    # issue #1061): reported as the file's parse error, as before the parse skipped validation
    from amplint.analysis.engine import Settings, lint_source

    text = ("import torch\n\n\ndef step(x, idx, n):\n    model = torch.nn.Linear(8, 8)\n"
            "    with torch.autocast('cuda'):\n"
            "        h = model(x)\n        out = torch.zeros(n, h.shape[-1], device=h.device)\n"
            "        out[idx] = h\n    cb = () if 0 else(lambda:())\n    return out, cb\n")
    # the rules no longer re-validate nodes as they walk (their walks do not rebuild the tree):
    # the file is checked and its finding reported
    result = lint_source("step.py", text, Settings.default())
    assert not result.internal_error and result.errors == []
    assert [d.code for d in result.diagnostics] == ["AMP101"]
    # a fix rebuilds nodes, which LibCST validates: the file is left alone, with one parse error
    result = lint_source("step.py", text, Settings.default(), fix=True)
    assert not result.internal_error and result.fixed_source is None
    assert len(result.errors) == 1 and result.errors[0].startswith("step.py: cannot parse: ")


def test_summary_counts_unchecked_files_beside_findings(project):
    """A run with a finding and an unreadable file says both in its one summary line (it used to
    print `Found 1 finding.` and drop the file it could not check), and exits 1."""
    (project / "good.py").write_text(SOURCE)
    (project / "latin1.py").write_bytes("# café\n".encode("latin-1"))
    result = invoke(".")
    assert result.exit_code == 1
    assert "Found 1 finding; 1 file could not be checked (see the errors above)." in result.stdout
    assert len(error_lines(result, "latin1.py")) == 1


def test_exit_status_story_is_told_the_same_in_help_and_readme(project):
    """`--help` and the README give one exit-status story, and a nonexistent path follows it."""
    readme = open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "README.md")).read()
    help_text = " ".join(invoke("--help").output.split())
    assert "1 findings remain or a file or path could not be checked" in help_text
    assert "**1** findings remain, or a file or path could not be checked" in readme
    missing = invoke("no_such_dir")
    assert missing.exit_code == 1 and len(error_lines(missing, "no_such_dir")) == 1
