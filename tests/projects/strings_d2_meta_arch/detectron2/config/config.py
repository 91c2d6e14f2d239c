from fvcore.common.config import CfgNode as _CfgNode


class CfgNode(_CfgNode):
    def merge_from_file(self, cfg_filename: str, allow_unsafe: bool = True) -> None:
        loaded_cfg = self.load_yaml_with_base(cfg_filename, allow_unsafe=allow_unsafe)
        self.merge_from_other_cfg(type(self)(loaded_cfg))


def get_cfg() -> CfgNode:
    from .defaults import _C

    return _C.clone()
