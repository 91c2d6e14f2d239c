from .kerasmodel import KerasModel
