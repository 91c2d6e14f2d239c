from .softmax import ImageSoftmaxEngine
