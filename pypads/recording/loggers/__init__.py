"""The loggers pypads ships. Each is a small class with a pre and a post phase."""

from pypads.core import Logger
from pypads.recording.content.serialize import WriteFormats
from pypads.recording.loggers.autolog import MlflowAutologger
from pypads.recording.loggers.comparison import ModelRuns
from pypads.recording.loggers.crossval import CrossValidation
from pypads.recording.loggers.datasets import Datasets
from pypads.recording.loggers.debug import Log, LogInit
from pypads.recording.loggers.hardware import Cpu, Disk, Ram
from pypads.recording.loggers.metric import Metric
from pypads.recording.loggers.model import Model
from pypads.recording.loggers.parameters import Parameters
from pypads.recording.loggers.pipeline import PipelineTracker
from pypads.recording.loggers.readings import Readings
from pypads.recording.loggers.search import Search
from pypads.recording.loggers.training import TrainingScores
from pypads.recording.loggers.values import Input, Output

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
    "Readings",
    "Search",
    "TrainingScores",
    "WriteFormats",
]
