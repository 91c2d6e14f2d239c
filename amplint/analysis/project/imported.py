"""Facts about other files that a file's code depends on, delivered as entries: custom autograd
Functions it imports (function_entries.py, AMP151), module classes it imports whose forward
opens no autocast (module_entries.py, AMP153), and the region dtypes of the files its
GradScaler's protocol reaches (scaler_regions.py, AMP124), and the functions it imports that
call a parameter under autocast (half_callees.py, AMP103), and the functions whose half
returned value a region of another file runs (half_returns.py, AMP103), and the parameters of
its functions that another file passes a half model (half_params.py, AMP140; passed on to
methods and functions of any file, every call agreeing: half_param_flow.py, AMP140/AMP141), and the half
dtypes dataclass configs hold by default (dtype_fields.py, AMP103) and config properties or
attributes hold whatever built them (config_dtypes.py, AMP124), the optimizer classes that take
AMP's scaling over (amp_scaling_classes.py, AMP103), and the functions its float16
code passes float16 values (float16_args.py, AMP140/AMP141), the big numeric constants it
imports (imported_constants.py, AMP110), and the kind of value the functions it imports return
(return_kinds.py, AMP131/AMP111/AMP152), and the attributes its facts read from its own stores
that another file stores too (foreign_stores.py), and the builders it imports that pick a class
by a string (chosen_builders.py, AMP102 and the scaler facts), and its public functions no other
file mentions (local_callers.py: the dtype fact binds their parameters from the file's calls). Computed once per project pass,
after the regions and the scaler entries are known."""

from __future__ import annotations

from typing import Dict, Mapping, Sequence, Tuple

from amplint.analysis.project.amp_scaling_classes import scaling_optimizer_entries
from amplint.analysis.project.chosen_builders import chosen_entries
from amplint.analysis.project.config_dtypes import config_dtype_entries
from amplint.analysis.project.dtype_fields import dtype_field_entries
from amplint.analysis.project.foreign_stores import foreign_store_entries
from amplint.analysis.project.function_entries import function_entries
from amplint.analysis.project.float16_args import float16_arg_entries
from amplint.analysis.project.imported_constants import constant_entries
from amplint.analysis.project.local_callers import local_caller_entries
from amplint.analysis.project.half_callees import half_callee_entries
from amplint.analysis.project.half_params import half_param_entries
from amplint.analysis.project.half_returns import half_return_entries
from amplint.analysis.project.module_entries import module_entries
from amplint.analysis.project.return_kinds import return_kind_entries
from amplint.analysis.project.scaler_regions import scaler_region_entries


def imported_entries(project, paths: Sequence[str],
                     scaler: Mapping[str, Tuple[object, ...]] = {}) -> Dict[str, Tuple[object, ...]]:
    """`scaler`: the pass's EntryScalers by path (scaler_resolution.scaler_entries)."""
    found: Dict[str, Tuple[object, ...]] = dict(function_entries(project, paths))
    for more in (module_entries(project, paths), scaler_region_entries(project, scaler),
                 half_callee_entries(project, paths), half_return_entries(project, paths),
                 half_param_entries(project, paths), dtype_field_entries(project, paths),
                 float16_arg_entries(project, paths), constant_entries(project, paths),
                 return_kind_entries(project, paths), foreign_store_entries(project, paths),
                 config_dtype_entries(project, paths), scaling_optimizer_entries(project, paths),
                 chosen_entries(project, paths), local_caller_entries(project, paths)):
        for path, extra in more.items():
            found[path] = found.get(path, ()) + extra
    return found
