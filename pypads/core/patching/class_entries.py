"""Which mapping entries apply to which classes, with a log to take back the latest."""

from __future__ import annotations

from pypads.core.mapping.model import CallReading, MappingEntry, reading_among


class ClassEntries:
    """The entries given to each mapped class; a class's own and its bases' apply to it.
    Every addition is logged in order, so that what a failed target added can be taken
    back (:meth:`mark`, :meth:`undo`)."""

    def __init__(self) -> None:
        self._by_class: dict[type, list[MappingEntry]] = {}
        self._log: list[tuple[type, MappingEntry]] = []

    def add(self, cls: type, entry: MappingEntry) -> None:
        self._by_class.setdefault(cls, []).append(entry)
        self._log.append((cls, entry))

    def of(self, cls: type) -> list[MappingEntry]:
        """The entries that apply to ``cls``: its own, then its bases' in MRO order."""
        return [entry for klass in cls.__mro__ for entry in self._by_class.get(klass, ())]

    def reading(self, cls: type, attribute: str) -> CallReading | None:
        """What the entries of ``cls`` say to read of calls of ``attribute``."""
        return reading_among(self.of(cls), attribute)

    def mark(self) -> int:
        return len(self._log)

    def undo(self, mark: int) -> None:
        """Take back the entries added since ``mark``, newest first: without its entries,
        a class (and its future subclasses) is no longer patched."""
        for cls, entry in reversed(self._log[mark:]):
            remaining = self._by_class[cls]
            del remaining[next(index for index, kept in enumerate(remaining) if kept is entry)]
            if not remaining:
                del self._by_class[cls]
        del self._log[mark:]
