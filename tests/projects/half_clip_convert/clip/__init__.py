from .clip import available_models, load  # noqa: F401
