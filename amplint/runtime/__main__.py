"""``python -m amplint.runtime verify [PATHS...]``: verify every runnable fixture pair.

Prints, per pair, PASS/FAIL/ERROR and the three checks of :mod:`amplint.runtime.verify` (fp32
before == after; the before shows its hazard; the after under autocast matches the fp32
reference), and what the device could not show.  A case that cannot run is a SKIP with its
reason; the summary line counts every outcome.  Exit status: 0 every case that ran passed (and
at least one ran), 1 otherwise, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional

import torch

from .fixtures import SkipCase, discover, verify_fixture_pair
from .verify import ERROR, FAIL, PASS, default_device, default_dtypes

_DTYPES = {"float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
           "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m amplint.runtime",
                                     description="amplint runtime companion")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify runnable before/after fixture pairs")
    v.add_argument("paths", nargs="*", type=Path, help="fixture folders/files (default: fixtures)")
    v.add_argument("--entry", metavar="FILE.py::FUNC",
                   help="verify amplint --fix on your project: FUNC(device, dtype) runs one step")
    v.add_argument("--project", type=Path, default=None,
                   help="with --entry: the project folder to copy and fix (default: FILE's folder)")
    v.add_argument("--unsafe-fixes", action="store_true", help="with --entry: also unsafe fixes")
    v.add_argument("--device", choices=["cuda", "cuda-emulated", "cpu"], default=None,
                   help="default: cuda when available, else cuda-emulated (CUDA's autocast "
                        "rules on CPU); cpu: plain CPU autocast")
    v.add_argument("--dtype", action="append", choices=sorted(_DTYPES),
                   help="mixed-precision dtype(s) to run (default: float16 and bfloat16)")
    v.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)

    device = args.device or default_device()
    if device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda but torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    dtypes = [_DTYPES[d] for d in args.dtype] if args.dtype else default_dtypes(device)
    if args.entry:
        return _entry(args, device, dtypes)
    cases = []
    args.paths = args.paths or [Path("fixtures")]
    for path in args.paths:
        if not path.exists():
            print(f"error: {path} does not exist", file=sys.stderr)
            return 2
        cases.extend(discover(path))

    results, skipped = [], []
    for case in cases:
        why = case.why_not if not case.runnable else None
        result = None
        if why is None:
            try:
                result = verify_fixture_pair(case, device=device, dtypes=dtypes)
            except SkipCase as exc:
                why = str(exc)
            except Exception as exc:  # a fixture that cannot even be imported
                result = f"ERROR {case.name}: could not load: {type(exc).__name__}: {exc}"
        if why is not None:
            skipped.append((case, why))
            if not args.json:
                print(f"SKIP {case.name}: {why}")
            continue
        results.append(result)
        if not args.json:
            print(result if isinstance(result, str) else result.summary())

    counts = {PASS: 0, FAIL: 0, ERROR: 0}
    for r in results:
        counts[ERROR if isinstance(r, str) else r.status] += 1
    if args.json:
        print(json.dumps({
            "device": device, "dtypes": [str(d).replace("torch.", "") for d in dtypes],
            "results": [r.to_dict() if not isinstance(r, str) else {"status": ERROR, "error": r}
                        for r in results],
            "skipped": [{"name": c.name, "why": why} for c, why in skipped],
            "passed": counts[PASS], "failed": counts[FAIL], "errors": counts[ERROR],
            "skips": len(skipped)}, indent=2, default=str))
    else:
        print(f"\n{counts[PASS]} passed, {counts[FAIL]} failed, {counts[ERROR]} errors, "
              f"{len(skipped)} skipped (device {device}; "
              f"{', '.join(str(d).replace('torch.', '') for d in dtypes)})")
    if not results:
        return 1
    return 0 if counts[PASS] == len(results) else 1


def _entry(args, device, dtypes) -> int:
    from .entry import verify_entry

    if args.paths:
        print("error: --entry takes no fixture paths", file=sys.stderr)
        return 2
    try:
        outcome = verify_entry(args.entry, project=args.project, device=device, dtypes=dtypes,
                               lint_args=["--unsafe-fixes"] if args.unsafe_fixes else [])
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"entry": args.entry, "status": outcome.status,
                          "findings": outcome.findings, "changed": outcome.changed,
                          "notes": outcome.notes,
                          "result": outcome.result.to_dict() if outcome.result else None},
                         indent=2, default=str))
    else:
        print(outcome.summary())
    return 0 if outcome.status in (PASS, "SKIP") else 1


if __name__ == "__main__":
    sys.exit(main())
