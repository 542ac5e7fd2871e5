"""A command's progress lines: in a Jupyter notebook one line under the cell, updated in place
(an IPython display handle, so a long run does not fill the cell with lines); elsewhere written
to ``sys.stderr`` as the command line writes them. The native module calls :func:`show` for
each line and :func:`end` when the command has ended."""

from __future__ import annotations

import sys
from typing import Any, Optional

_handle: Optional[Any] = None  # the display updated by this command's lines


def _in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython's ZMQ shell), whose front end shows
    display updates."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return type(shell).__name__ == "ZMQInteractiveShell"


def _display(text: str, handle: Optional[Any]) -> Any:
    """Shows ``text`` as plain text, replacing what ``handle`` shows (a new display if none);
    returns the handle."""
    from IPython.display import Pretty, display

    if handle is None:
        return display(Pretty(text), display_id=True)
    handle.update(Pretty(text))
    return handle


def show(line: str) -> None:
    """One progress line (ends with a newline)."""
    global _handle
    if not _in_notebook():
        sys.stderr.write(line)
        return
    _handle = _display(line.rstrip("\n"), _handle)


def end() -> None:
    """The command has ended: the next command's progress gets its own line."""
    global _handle
    _handle = None
