#!/usr/bin/env bash
# The GPU checks, as one script for a lent CUDA machine (a benchmark, never run by CI):
#   OUT=/some/dir bash benchmarks/cuda_checks.sh
# Needs torch with CUDA there; libcst travels as wheels in .whl/ (python3 -m pip download
# --no-deps --only-binary=:all: --python-version 3.12 ... libcst, see the device notes).
# Writes to $OUT: the CUDA/runtime tests' log, the verifier's verdicts on fixtures/ under
# --device cuda and --device cuda-emulated (JSON, compared below), the dtype fact's recorded
# CUDA dtypes (compare here with `python benchmarks/dtype_cuda_proof.py compare OUT/o.json`),
# and the monitor's overhead on a CUDA training step.
set -u
OUT=${OUT:?set OUT to a folder}
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import sys, torch, libcst; print(sys.version.split()[0], 'torch', torch.__version__, torch.cuda.get_device_name(0))"
echo "== tests/runtime (CUDA ones included)"
timeout 240 python3 -m pytest -q -p no:cacheprovider -n 8 tests/runtime -rs 2>&1 | tee "$OUT/tests_runtime.txt" | tail -25
echo "== verify fixtures/"
for dev in cuda cuda-emulated; do
  timeout 120 python3 -m amplint.runtime verify fixtures/ --device $dev --json > "$OUT/verify_$dev.json" 2> "$OUT/verify_$dev.err"
  echo "verify --device $dev rc=$?"; tail -c 300 "$OUT/verify_$dev.err"
done
python3 - "$OUT" <<'PY'
import json, sys, os
def load(dev):
    try:
        data = json.load(open(os.path.join(sys.argv[1], f"verify_{dev}.json")))
    except Exception as e:
        print(dev, "unreadable:", e); return {}
    rows = data["results"] if isinstance(data, dict) and "results" in data else data
    return {(r.get("pair") or r.get("name"), r.get("dtype")): r.get("verdict") or r.get("status") for r in rows}
a, b = load("cuda"), load("cuda-emulated")
from collections import Counter
print("cuda:", dict(Counter(a.values())), " cuda-emulated:", dict(Counter(b.values())))
for k in sorted(set(a) | set(b), key=str):
    if a.get(k) != b.get(k):
        print("differs:", k, "cuda", a.get(k), "emulated", b.get(k))
PY
echo "== dtype fact: record CUDA dtypes"
timeout 120 python3 benchmarks/dtype_cuda_proof.py record "$OUT"
echo "== monitor overhead on CUDA"
for dt in float16 bfloat16; do
  timeout 60 python3 benchmarks/runtime_overhead.py --device cuda --dtype $dt --steps 50 --repeats 5
done
