"""Run loggers: run once when the run starts (``init_run_fns``)."""

from pypads.recording.run_loggers.base import RunLogger, RunSettings
from pypads.recording.run_loggers.environment import IConsole, IPackages
from pypads.recording.run_loggers.git import IGit
from pypads.recording.run_loggers.sampler import HardwareSampler
from pypads.recording.run_loggers.system import ICpu, IDisk, IEnvironment, IMacAddress, IPid, IRam, ISocketInfo, ISystem

DEFAULT_INIT_RUN_FNS: tuple[RunLogger, ...] = (
    IGit(), ISystem(), ICpu(), IRam(), IDisk(), IPid(), ISocketInfo(), IMacAddress(),
    IEnvironment(), IPackages(), IConsole(),
)

__all__ = [
    "DEFAULT_INIT_RUN_FNS", "HardwareSampler", "ICpu", "IConsole", "IDisk", "IEnvironment", "IGit", "IMacAddress",
    "IPackages", "IPid", "IRam", "ISocketInfo", "ISystem", "RunLogger", "RunSettings",
]
