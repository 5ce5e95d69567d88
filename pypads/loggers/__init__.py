"""The loggers pypads ships. Each is a small class with a pre and a post phase."""

from pypads.loggers.autolog import MlflowAutologger
from pypads.loggers.base import Logger
from pypads.loggers.debug import Log, LogInit
from pypads.loggers.hardware import Cpu, Disk, Ram
from pypads.loggers.metric import Metric
from pypads.loggers.parameters import Parameters
from pypads.loggers.pipeline import PipelineTracker
from pypads.loggers.serialize import WriteFormats
from pypads.loggers.values import Input, Output

__all__ = [
    "Cpu",
    "Disk",
    "Input",
    "Logger",
    "Log",
    "LogInit",
    "Metric",
    "MlflowAutologger",
    "Output",
    "Parameters",
    "PipelineTracker",
    "Ram",
    "WriteFormats",
]
