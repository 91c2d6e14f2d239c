from .utils_env import setup_environment

setup_environment()
__version__ = "0.1"
