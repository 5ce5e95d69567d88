"""The loggers pypads ships. Each is a small class with a pre and a post phase."""

from pypads.loggers.autolog import MlflowAutologger
from pypads.loggers.base import Logger
from pypads.loggers.comparison import ModelRuns
from pypads.loggers.crossval import CrossValidation
from pypads.loggers.datasets import Datasets
from pypads.loggers.debug import Log, LogInit
from pypads.loggers.hardware import Cpu, Disk, Ram
from pypads.loggers.metric import Metric
from pypads.loggers.model import Model
from pypads.loggers.parameters import Parameters
from pypads.loggers.pipeline import PipelineTracker
from pypads.loggers.search import Search
from pypads.loggers.serialize import WriteFormats
from pypads.loggers.training import TrainingScores
from pypads.loggers.values import Input, Output

__all__ = [
    "Cpu",
    "CrossValidation",
    "Datasets",
    "Disk",
    "Input",
    "Logger",
    "Log",
    "LogInit",
    "Metric",
    "MlflowAutologger",
    "Model",
    "ModelRuns",
    "Output",
    "Parameters",
    "PipelineTracker",
    "Ram",
    "Search",
    "TrainingScores",
    "WriteFormats",
]
