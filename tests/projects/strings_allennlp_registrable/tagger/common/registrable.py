from collections import defaultdict


class Registrable:
    """Subclasses are registered under a name and found again by it."""

    _registry = defaultdict(dict)

    @classmethod
    def register(cls, name):
        by_name = Registrable._registry[cls]

        def add(subclass):
            if name in by_name:
                raise KeyError(f"{name!r} is already registered for {cls.__name__}")
            by_name[name] = subclass
            return subclass

        return add

    @classmethod
    def by_name(cls, name):
        if name not in Registrable._registry[cls]:
            raise KeyError(f"{name!r} is not a registered {cls.__name__}")
        return Registrable._registry[cls][name]

    @classmethod
    def list_available(cls):
        return sorted(Registrable._registry[cls])
