"""The `.apply(fn)` converter test of the class flow's half casts (converters.may_apply_converter)
on whole trees, against the definition it replaces: every project function's name and those
whose body text holds a cast word (`^([ \\t]*)(?:async[ \\t]+)?def[ \\t]+(\\w+)[ \\t]*\\(`, MULTILINE,
the body up to the next def at its indentation or less). Prints per tree the files whose test
differs (must be 0) and the CPU seconds of the test over every file (best of 3).

    python benchmarks/converter_names.py DIR...
"""

from __future__ import annotations

import os
import re
import sys
import time
import types

from amplint.analysis.project import converters

_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.M)


def _texts(root):
    found = {}
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as handle:
                    found[path] = handle.read()
    return found


def _by_definition(texts):
    defined, casting = set(), set()
    for text in texts.values():
        matches = list(_DEF.finditer(text))
        for index, match in enumerate(matches):
            defined.add(match.group(2))
            end = next((later.start() for later in matches[index + 1:]
                        if len(later.group(1)) <= len(match.group(1))), len(text))
            if any(word in text[match.end():end] for word in converters._CAST_WORDS):
                casting.add(match.group(2))
    return defined, casting


def main(roots) -> int:
    unequal = 0
    for root in roots:
        texts = _texts(root)
        flow = types.SimpleNamespace(p=types.SimpleNamespace(python=sorted(texts), files=texts))
        best = None
        for _ in range(3):
            flow.__dict__.pop("_converter_names", None)
            start = time.process_time()
            found = [path for path in flow.p.python if converters.may_apply_converter(flow, texts[path])]
            spent = time.process_time() - start
            best = spent if best is None else min(best, spent)
        defined, casting = _by_definition(texts)
        expected = [path for path in flow.p.python if ".apply(" in texts[path] and any(
            name not in defined or name in casting
            for name in (m.group(1).rsplit(".", 1)[-1] for m in converters._APPLY.finditer(texts[path])))]
        differ = len(set(found) ^ set(expected))
        unequal += differ
        print(f"{root}: {len(texts)} files, {len(found)} may apply a converter, {differ} unequal, {best:.3f} s CPU")
    return 1 if unequal else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
