class AttentionRegistry:
    """Maps attention names to classes and the builder parameters each one accepts."""

    _classes = {}
    _parameters = {}

    @classmethod
    def register(cls, key, class_object, parameter_names):
        if key in cls._classes:
            raise ValueError(f"{key} is already registered")
        cls._classes[key] = class_object
        cls._parameters[key] = list(parameter_names)

    @classmethod
    def spec(cls, key):
        return cls._classes[key], cls._parameters[key]
