"""IGit: which code ran — commit, branch, remote (as MLflow's own ``mlflow.source.git.*``
tags), and the uncommitted changes.

It only reads: no ``git init``, no commit, no change to the index (the original PyPads
committed users' files).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pypads.core import redact_text, redact_url
from pypads.recording.narrator import logger
from pypads.recording.run_loggers.base import RunLogger, RunSettings
from pypads.run import RunContext

if TYPE_CHECKING:
    import git

MAX_DIFF_BYTES = 1_000_000
LOG_ENTRIES = 20
# MLflow's names (mlflow.utils.mlflow_tags), spelled out: MLflow is not imported here.
GIT_COMMIT = "mlflow.source.git.commit"
GIT_BRANCH = "mlflow.source.git.branch"
GIT_REPO_URL = "mlflow.source.git.repoURL"


class IGit(RunLogger):
    """Tags in MLflow's own names, which its UI shows on the run's page:
    ``mlflow.source.git.commit``, ``mlflow.source.git.branch`` (``(detached)`` on a
    detached head) and ``mlflow.source.git.repoURL`` (the ``origin`` remote, else the
    first, credentials stripped); and ``pypads.git.dirty`` (``True``/``False``:
    uncommitted or untracked files), the one people filter by that MLflow has no name
    for. Artifacts ``git/uncommitted.patch`` (the diff against HEAD, capped at
    ``max_diff_bytes``) and ``git/log.txt`` (the last commits). Outside a repository it
    logs nothing."""

    def __init__(self, max_diff_bytes: int = MAX_DIFF_BYTES) -> None:
        self.max_diff_bytes = max_diff_bytes

    def log(self, run: RunContext, settings: RunSettings) -> None:
        folder = os.getcwd()
        if not in_repository(folder):  # GitPython is not even imported: nothing to ask it
            # Silent: a line from this thread, on stderr, would land in the middle of
            # whatever the script prints there first (a traceback).
            return
        # Imported here, on the run loggers' thread: GitPython takes 0.1 s to import, on
        # a thread that shares the interpreter's lock with the script.
        import git

        try:
            repository = git.Repo(folder, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            logger.info("pypads: {} is not in a git repository; IGit logs nothing", folder)
            return
        with repository:
            self._log(repository, run)

    def _log(self, repository: git.Repo, run: RunContext) -> None:
        tags = {"pypads.git.dirty": str(repository.is_dirty(untracked_files=True))}
        if repository.head.is_valid():
            tags[GIT_COMMIT] = repository.head.commit.hexsha
            log = repository.git.log(f"-{LOG_ENTRIES}", "--format=%H %ad %an: %s", "--date=iso")
            run.writer.log_text("git/log.txt", redact_text(log) + "\n")
        tags[GIT_BRANCH] = "(detached)" if repository.head.is_detached else repository.active_branch.name
        remotes = {remote.name: redact_url(next(remote.urls, "")) for remote in repository.remotes}
        if remotes:
            tags[GIT_REPO_URL] = remotes.get("origin") or next(iter(remotes.values()))
        run.writer.set_tags(tags)
        diff = repository.git.diff("HEAD") if repository.head.is_valid() else repository.git.diff("--cached")
        if diff:
            data = diff.encode()
            if len(data) > self.max_diff_bytes:
                data = data[: self.max_diff_bytes] + b"\n# pypads: diff cut at max_diff_bytes\n"
            run.writer.log_bytes("git/uncommitted.patch", data)


def in_repository(folder: str) -> bool:
    """Whether ``folder`` or a folder above it may hold a git repository, as GitPython's
    search would find it: a ``.git`` entry (a folder, or the file of a worktree or
    submodule), or the folder itself a git folder (bare). A cheap look at the disk, so
    that a script outside any repository never pays for importing GitPython."""
    current = os.path.abspath(folder)
    while True:
        if os.path.exists(os.path.join(current, ".git")) or all(
                os.path.exists(os.path.join(current, part)) for part in ("HEAD", "objects", "refs")):
            return True
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent
