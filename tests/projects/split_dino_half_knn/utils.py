import os


def load_pretrained_weights(model, pretrained_weights):
    if not os.path.isfile(pretrained_weights):
        print("Please use the `--pretrained_weights` argument to indicate the path of the checkpoint.")
        return
