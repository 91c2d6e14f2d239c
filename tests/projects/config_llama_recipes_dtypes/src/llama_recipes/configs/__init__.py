from llama_recipes.configs.fsdp import fsdp_config
from llama_recipes.configs.training import train_config
