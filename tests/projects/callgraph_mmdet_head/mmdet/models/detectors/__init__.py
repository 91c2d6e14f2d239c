from .single_stage import SingleStageDetector
