from .focal import FocalBCE
