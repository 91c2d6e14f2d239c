__modules__ = {}


def register(name):
    def decorator(cls):
        if name in __modules__:
            raise ValueError(f"Module {name} already exists!")
        __modules__[name] = cls
        return cls

    return decorator


def find(name):
    if ":" in name:
        main_name, sub_name = name.split(":")
        bases = tuple(__modules__[n] for n in sub_name.split(",") + [main_name])
        return type(f"{main_name}.{sub_name}", bases, {})
    return __modules__[name]


from . import systems  # noqa: E402,F401
