import os


def setup_environment():
    os.environ.setdefault("D2LITE_ENV", "1")
