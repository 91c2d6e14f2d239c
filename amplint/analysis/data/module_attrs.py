"""The public attributes every `torch.nn.Module` has, for the project pass's open world
(amplint/analysis/project/openworld.py): a project class deriving from `torch.nn.Module` has
these without defining them. Source: `dir(torch.nn.Module)` and the attributes `Module.__init__`
sets, torch 2.13.0, less the private names and `forward` (Module's own raises: a class must
define it to be called)."""

MODULE_ATTRS = frozenset({
    "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile", "cpu",
    "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "get_buffer",
    "get_extra_state", "get_parameter", "get_submodule", "half", "ipu", "load_state_dict",
    "modules", "mtia", "named_buffers", "named_children", "named_modules", "named_parameters",
    "parameters", "register_backward_hook", "register_buffer", "register_forward_hook",
    "register_forward_pre_hook", "register_full_backward_hook", "register_full_backward_pre_hook",
    "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook", "register_module",
    "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook",
    "requires_grad_", "set_extra_state", "set_submodule", "share_memory", "state_dict", "to",
    "to_empty", "train", "training", "type", "xpu", "zero_grad",
})

# bases written as a builtin or a standard-library marker: they give a class nothing a model
# call could use (a class deriving only from these has exactly the attributes it defines)
PLAIN_BASES = frozenset({
    "?object", "object", "abc.ABC", "typing.Generic", "typing.Protocol", "?Exception",
    "?ValueError", "?RuntimeError", "enum.Enum", "typing.NamedTuple",
})
