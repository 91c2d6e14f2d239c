from classy_vision.tasks.classy_task import ClassyTask
from classy_vision.tasks.classification_task import ClassificationTask
from classy_vision.tasks.fine_tuning_task import FineTuningTask

__all__ = ["ClassyTask", "ClassificationTask", "FineTuningTask"]
