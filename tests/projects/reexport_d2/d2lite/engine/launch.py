def launch(main_func, *args):
    return main_func(*args)
