"""The dtype fact (amplint.analysis.facts.dtypes) against CUDA autocast, by execution (issue 26).

    python benchmarks/dtype_cuda_proof.py record OUT_DIR     # on a GPU machine: torch only
    python benchmarks/dtype_cuda_proof.py compare OUT_DIR/o.json   # here: amplint only

`record` runs 300 seeded straight-line programs (float16 CUDA autocast around 60 % of the
statements) under a TorchFunctionMode and writes the dtype each source span produced (o.json),
then 300 whose statements partly sit in two private helpers called inside and outside the region
(c.json: parameters bound at call sites);
`compare` prints how many of those the fact predicted, confirmed, and got wrong (must be 0).
The two halves share `gen`, so the GPU side needs neither amplint nor libcst."""
import random,json,sys,os
T=["{x}@{y}","torch.mm({x},{y})","F.linear({x},{y})","{x}.exp()","{x}.softmax(-1)","{x}.sum()","{x}**2","{x}.pow(2)","F.layer_norm({x},(4,))","{x}.norm()","{x}.cumsum(0)","{x}.log_softmax(-1)","{x}+{y}","{x}*2","{x}.half()","{x}.float()","torch.sigmoid({x})","{x}.relu()","{x}.mean()","lin({x})","norm({x})","F.mse_loss({x},{y})","torch.einsum('ij,jk->ik',{x},{y})","F.normalize({x})","{x}.view(16)","torch.bmm({x}[None],{y}[None])","{x}.t()","torch.cat([{x},{y}])","{x}.logsumexp(0)","{x}.rsqrt()","F.gelu({x})","{x}.bfloat16()","{x}.prod()","torch.cdist({x},{y})","{x}.addcmul({y},{y})","torch.addmm({x},{x},{y})","{x}.tan()","F.softplus({x})"]
def gen(s):
 r=random.Random(s);N="abcd";L=["import torch","torch.set_default_device('cuda')","import torch.nn.functional as F","lin=torch.nn.Linear(4,4)","norm=torch.nn.LayerNorm(4)"]+[f"{n}=torch.randn(4,4)" for n in N]
 for _ in range(10):
  i=r.random()<.6
  if i:L.append("with torch.autocast('cuda',dtype=torch.float16):")
  L.append("    "*i+r.choice(N)+"="+r.choice(T).format(x=r.choice(N),y=r.choice(N)))
 return "\n".join(L)+"\n"
def gen_calls(s):
 # the same statements, partly inside two private helpers whose parameters the fact binds from
 # every call (amplint.analysis.facts.dtype_params); the calls run inside and outside the region
 r=random.Random(10**6+s);L=gen(s).splitlines()[:5];V="xyt"
 for h in ("_h1","_h2"):
  L+=[f"def {h}(x,y):","    t=x"]+["    "+r.choice(V)+"="+r.choice(T).format(x=r.choice(V),y=r.choice(V)) for _ in range(3)]+["    return t"]
 L+=[f"{n}=torch.randn(4,4)" for n in "abcd"]+["b=b.half()"]
 for _ in range(8):
  i=r.random()<.5
  if i:L.append("with torch.autocast('cuda',dtype=torch.float16):")
  e=r.choice(T).format(x=r.choice("abcd"),y=r.choice("abcd")) if r.random()<.5 else f"{r.choice(['_h1','_h2'])}({r.choice('abcd')},{r.choice('abcd')})"
  L.append("    "*i+r.choice("abcd")+"="+e)
 return "\n".join(L)+"\n"


def record(out_dir, name="o.json", make=None):
    import torch
    from torch.overrides import TorchFunctionMode as M
    make = make or gen
    O = []
    for s in range(300):
        src = make(s)
        seen, region = {}, {}

        class R(M):
            def __torch_function__(self, f, t, a=(), k=None):
                o = f(*a, **(k or {}))
                if isinstance(o, torch.Tensor):
                    g = sys._getframe(1)
                    while g and g.f_code.co_filename != "<p>":
                        g = g.f_back
                    if g:
                        p = list(g.f_code.co_positions())[g.f_lasti // 2]
                        key, dt = "%d,%d,%d,%d" % (p[0], p[2], p[1], p[3]), str(o.dtype)[6:]
                        seen.setdefault(key, set()).add(dt)
                        if torch.is_autocast_enabled("cuda"):
                            region.setdefault(key, set()).add(dt)
                return o
        with R():
            try:
                exec(compile(src, "<p>", "exec"), {})
            except Exception:
                pass
        # "on_region": what each span produced while autocast was on (a function the fact reads
        # along a region's call holds its value on that path only: facts/dtype_paths.py)
        O.append({"seen": {k: sorted(v) for k, v in seen.items()},
                  "on_region": {k: sorted(v) for k, v in region.items()}})
    json.dump(O, open(os.path.join(out_dir, name), "w"))
    print("recorded", len(O), "programs with torch", torch.__version__)
    if name == "o.json":
        record(out_dir, "c.json", gen_calls)


def compare(path):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
    from dtype_recorder import Observed, compare as check
    totals = [0, 0, 0, 0]

    def spans(recorded):
        return {tuple(map(int, k.split(","))): {"integer" if v.startswith(("int", "uint")) else v
                                                for v in vals} for k, vals in recorded.items()}
    for s, obs in enumerate(json.load(open(path))):
        if "seen" not in obs:
            sys.exit(f"{path}: recorded before on_region was kept; record it again")
        observed = Observed(spans(obs["seen"]), spans(obs["on_region"]))
        make = gen_calls if os.path.basename(path) == "c.json" else gen
        checked, confirmed, failures = check(make(s), observed, "float16")
        totals[0] += len(observed)
        totals[1] += checked
        totals[2] += confirmed
        totals[3] += len(failures)
        for failure in failures:
            print(f"program {s}: {failure}")
    print("spans ran %d, predicted %d, exact confirmed %d, wrong %d" % tuple(totals))


if __name__ == "__main__":
    record(sys.argv[2]) if sys.argv[1] == "record" else compare(sys.argv[2])
