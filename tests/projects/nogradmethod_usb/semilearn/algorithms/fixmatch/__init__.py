from .fixmatch import FixMatch
