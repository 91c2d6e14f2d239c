from .models import create_model, list_models
