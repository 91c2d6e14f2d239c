"""AMP150 across files through a held module (amplint/analysis/project/nograd_held.py): a
callable object of another file stores the module it is built with (`self.model = model` in
`__init__`) and runs it under no_grad in `__call__`; the loop calls the object and then the same
module with grad, in one autocast region.

tests/projects/nograd_mpl_labeler: kekmodel/MPL-pytorch layout (main.py `train_loop` and
`main`, models.py WideResNet, utils.py AverageMeter) in a fork that moves the hard pseudo labels
into a callable `PseudoLabeler` in utils.py, built in `main` and passed to `train_loop`. Built
with the student, which the region then trains: AMP150 at the student's grad forward. Twins:
built with the teacher (another instance, another weight cache entry); a second call site
passing a labeler of the teacher (which module it holds is no longer one); the fix.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "nograd_mpl_labeler"
FINDING = ("main.py", 18, "AMP150")
BUILT = "    labeler = PseudoLabeler(student_model, args.threshold)\n"


def amp150(files):
    return code_findings(files, "AMP150")


def test_labeler_built_with_the_student_then_the_student_trains_in_the_region():
    found, results = amp150(load(NAME))
    assert found == [FINDING]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP150"]
    assert "through `labeler` (`PseudoLabeler.__call__`, defined at utils.py:11" in diag.message
    assert diag.fix is not None  # cache_enabled=False, as within a file


def test_twin_labeler_built_with_the_teacher_is_silent():
    files = load(NAME, ((BUILT, BUILT.replace("student_model", "teacher_model")),))
    assert amp150(files)[0] == []


def test_twin_a_second_call_site_with_a_teacher_labeler_is_silent():
    loop = "        train_loop(args, labeled_loader, unlabeled_loader, student_model, s_optimizer, scaler, labeler)\n"
    files = load(NAME, ((loop, loop + loop.replace("labeler)", "PseudoLabeler(teacher_model))")),))
    assert amp150(files)[0] == []


def test_twin_the_fix_is_silent():
    files = load(NAME, (('torch.autocast("cuda", dtype=torch.float16)',
                         'torch.autocast("cuda", dtype=torch.float16, cache_enabled=False)'),))
    assert amp150(files)[0] == []


def test_labeler_built_in_the_loop_from_its_parameter():
    files = load(NAME, (("    losses = AverageMeter()\n",
                         "    losses = AverageMeter()\n    labeler = PseudoLabeler(student_model)\n"),
                        ("s_optimizer, scaler, labeler):", "s_optimizer, scaler, threshold):")))
    assert amp150(files)[0] == [("main.py", 19, "AMP150")]
