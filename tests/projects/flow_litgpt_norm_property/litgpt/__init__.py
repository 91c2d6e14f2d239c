from litgpt.config import Config
from litgpt.model import GPT
