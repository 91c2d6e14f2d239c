from deepspeed.runtime.engine import DeepSpeedEngine  # noqa: F401
