from fused_lamb.fused_lamb import FusedLAMBAMP  # noqa: F401
