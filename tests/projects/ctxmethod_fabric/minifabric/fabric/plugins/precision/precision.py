from contextlib import nullcontext


class Precision:
    precision = "32-true"

    def forward_context(self):
        return nullcontext()

    def backward(self, tensor, model):
        tensor.backward()
