from abc import ABC, abstractmethod


class BaseModel(ABC):
    def __init__(self, opt):
        self.opt = opt

    @abstractmethod
    def set_input(self, input):
        pass

    @abstractmethod
    def forward(self):
        pass
