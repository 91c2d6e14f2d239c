import fire

from engine.trainer import train_one_epoch

if __name__ == "__main__":
    # the model and the loader come from the command line's plugin hooks, not from this tree
    fire.Fire({"epoch": train_one_epoch})
