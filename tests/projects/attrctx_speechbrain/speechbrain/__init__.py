from speechbrain.core import Brain  # noqa: F401
