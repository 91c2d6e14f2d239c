from .shifted_windows import ShiftedWindowNet


def build_model(config):
    return ShiftedWindowNet(config.dim, config.depth, config.window, fused=config.fused_window)
