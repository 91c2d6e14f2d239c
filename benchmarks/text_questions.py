"""CPU of the project pass's text questions (call_words.CallWords and PassedWords), replayed:
the questions a pass asked, in its order, answered again over the same texts by whichever amplint
is on PYTHONPATH, so two checkouts' answers and costs compare without the rest of the pass.

    python benchmarks/text_questions.py --record QUESTIONS -- AMPLINT-ARGS...   (runs the pass)
    python benchmarks/text_questions.py QUESTIONS DIR                            (replays, best of 3)

QUESTIONS: one question a line, `calls WORD`, `passes WORD` or `binds WORD PLAIN`."""

from __future__ import annotations

import hashlib
import os
import sys
import time

from amplint.analysis.project import call_words


def record(out_path: str, argv) -> int:
    out = open(out_path, "w")

    def logged(kind, method):
        def ask(self, word, *rest):
            out.write(" ".join([kind, word] + [str(x) for x in rest]) + "\n")
            return method(self, word, *rest)
        return ask

    call_words.CallWords.files_calling = logged("calls", call_words.CallWords.files_calling)
    call_words.CallWords.binding_indirectly = logged("binds", call_words.CallWords.binding_indirectly)
    call_words.PassedWords.files_passing = logged("passes", call_words.PassedWords.files_passing)
    from amplint.cli.main import main

    sys.argv = ["amplint"] + list(argv)
    try:
        return main()
    finally:
        out.close()


def texts_of(root: str):
    texts = {}
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                try:
                    with open(path, encoding="utf-8") as handle:
                        texts[path] = handle.read()
                except (OSError, UnicodeDecodeError):
                    continue
    return texts


class _Project:
    def __init__(self, texts) -> None:
        self.files = texts
        self.python = list(texts)


class _Values:  # what callback_sites reads of the class flow
    def __init__(self, texts) -> None:
        self.p = _Project(texts)


def replay(questions, texts):
    """The answers, a passed name's files as callback_sites keeps them (its whole pattern tried on
    `files_passing`'s, which a scan may give more of than the index)."""
    from amplint.analysis.project.callback_sites import _files_passing

    calling, values = call_words.CallWords(list(texts), texts), _Values(texts)
    answers = []
    for kind, word, *rest in questions:
        if kind == "calls":
            answers.append(calling.files_calling(word))
        elif kind == "passes":
            answers.append(_files_passing(values, word))
        else:
            answers.append(calling.binding_indirectly(word, rest[0] == "True"))
    return answers


def main(argv) -> int:
    if argv[:1] == ["--record"]:
        return record(argv[1], argv[3:] if argv[2:3] == ["--"] else argv[2:])
    with open(argv[0]) as handle:
        questions = [line.split() for line in handle if line.strip()]
    texts = texts_of(argv[1])
    for kind in ("calls", "passes", "binds"):
        asked = [q for q in questions if q[0] == kind]
        spent = []
        for _ in range(3):
            start = time.process_time()
            answers = replay(asked, texts)
            spent.append(time.process_time() - start)
        digest = hashlib.sha1(repr(answers).encode()).hexdigest()[:12]
        print(f"{kind:7} {len(asked):4} questions  CPU s best {min(spent):.3f}  answers {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
