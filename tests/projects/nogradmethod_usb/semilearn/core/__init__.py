from .algorithmbase import AlgorithmBase
