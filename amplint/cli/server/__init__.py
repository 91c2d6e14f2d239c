"""`amplint server`: a Language Server Protocol server over stdio (`pip install "amplint[server]"`).

Diagnostics as the editor's buffers change, from the same engine and project context as
`amplint .`; code actions for the fixes, for fixing every safe finding of a file and for
`# noqa`; hover shows the rule's `--explain` page. Only this command imports pygls."""

from __future__ import annotations

import multiprocessing
import os
import sys

MISSING = ("amplint: error: `amplint server` needs pygls and lsprotocol; "
           'install them with `pip install "amplint[server]"`')


def main() -> int:
    try:
        from amplint.cli.server.app import server
    except ImportError as exc:
        if getattr(exc, "name", "") and exc.name.split(".")[0] in ("pygls", "lsprotocol", "cattrs"):
            print(MISSING, file=sys.stderr)
            return 2
        raise
    # The process pool of the first pass must not fork this threaded process (a child can
    # inherit a lock another thread holds); and nothing but the protocol may reach stdout.
    multiprocessing.set_start_method("forkserver" if "forkserver" in
                                     multiprocessing.get_all_start_methods() else "spawn", force=True)
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    server.start_io(stdin=sys.stdin.buffer, stdout=protocol_out)
    return 0
