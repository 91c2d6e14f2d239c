"""``python -m amplint.runtime verify [PATHS...]``: verify every runnable fixture pair.

Prints, per pair, the before's outcome (what it raised, which codes the monitor reported), the
after's outcome and its largest absolute/relative difference against the fp32 reference (and the
before), and which CUDA-only expectations were not checked.  Pairs without ``amplint_run`` are
listed as "not runnable".  Exit status: 0 every runnable pair verified, 1 a pair failed (or none
was runnable), 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional

import torch

from .fixtures import discover, verify_fixture_pair
from .verify import default_device, default_dtypes

_DTYPES = {"float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
           "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m amplint.runtime",
                                     description="amplint runtime companion")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify runnable before/after fixture pairs")
    v.add_argument("paths", nargs="*", default=["fixtures"], type=Path)
    v.add_argument("--device", choices=["cpu", "cuda"], default=None,
                   help="default: cuda when available, else cpu")
    v.add_argument("--dtype", action="append", choices=sorted(_DTYPES),
                   help="mixed-precision dtype(s) to run (default: float16 and bfloat16)")
    v.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)

    device = args.device or default_device()
    if device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda but torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    dtypes = [_DTYPES[d] for d in args.dtype] if args.dtype else default_dtypes(device)
    cases = []
    for path in args.paths:
        if not path.exists():
            print(f"error: {path} does not exist", file=sys.stderr)
            return 2
        cases.extend(discover(path))

    results, skipped = [], []
    for case in cases:
        if not case.runnable:
            skipped.append(case)
            if not args.json:
                print(f"SKIP {case.name}: not runnable ({case.why_not})")
            continue
        try:
            result = verify_fixture_pair(case, device=device, dtypes=dtypes)
        except Exception as exc:  # a fixture that cannot even be imported
            print(f"FAIL {case.name}: could not load: {type(exc).__name__}: {exc}")
            results.append(None)
            continue
        results.append(result)
        if not args.json:
            print(result.summary())

    passed = sum(1 for r in results if r is not None and r.verified)
    failed = len(results) - passed
    if args.json:
        print(json.dumps({
            "device": device, "dtypes": [str(d).replace("torch.", "") for d in dtypes],
            "results": [r.to_dict() for r in results if r is not None],
            "not_runnable": [{"name": c.name, "why": c.why_not} for c in skipped],
            "passed": passed, "failed": failed}, indent=2, default=str))
    else:
        print(f"\n{passed} verified, {failed} failed, {len(skipped)} not runnable "
              f"(device {device}; {', '.join(str(d).replace('torch.', '') for d in dtypes)})")
    if not results:
        return 1
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
