"""Whether the GIL is on, and which import turned it back on.

On a free-threaded build, importing an extension module that does not
declare free-threading support re-enables the GIL for the whole process,
with only a RuntimeWarning. A run labelled "free-threaded" would then have
measured a GIL. bench.py installs ``watch()`` before anything else is
imported, and every batch reads ``enabled()``.
"""

import re
import sys
import warnings

_ENABLED_BY = re.compile(r"GIL\) has been enabled to load module '([^']+)'")


class GilWatch:
    """The modules that re-enabled the GIL in this process, in order."""

    modules = []
    _installed = False

    @classmethod
    def note(cls, message):
        found = _ENABLED_BY.search(str(message))
        if found and found.group(1) not in cls.modules:
            cls.modules.append(found.group(1))

    @classmethod
    def install(cls):
        if cls._installed:
            return
        cls._installed = True
        shown = warnings.showwarning

        def showwarning(message, category, *args, **kwargs):
            cls.note(message)
            return shown(message, category, *args, **kwargs)
        warnings.showwarning = showwarning


def watch():
    GilWatch.install()


def enabled():
    """True unless this is a free-threaded build running without the GIL."""
    check = getattr(sys, "_is_gil_enabled", None)
    return True if check is None else bool(check())


def free_threaded_build():
    import sysconfig
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
