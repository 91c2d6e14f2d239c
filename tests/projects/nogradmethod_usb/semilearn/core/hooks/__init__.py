from .pseudo_label import PseudoLabelingHook
