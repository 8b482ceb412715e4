"""Workloads and models from other packages, and from a module named on the
command line.

A distribution declares them as entry points: in the group
``concbench.workloads`` the name is the workload's and the object a
``Workload`` subclass (or a function made a workload by
``concbench.workloads.simple.workload``); in ``concbench.models`` the name is
the model family's and the object a ``Model`` subclass. They come after the
built-in ones, sorted by name, so that a benchmark's position (by which pyperf
selects a worker's benchmark) does not depend on the order they were
installed in. ``--workload-module FILE.py|package.module`` adds the workloads
a module defines, without packaging it.

Each is checked against the contract the built-in ones follow; what is wrong
is one line naming the plugin (``PluginError``).
"""

import importlib
import os
import re
import sys

WORKLOAD_GROUP = "concbench.workloads"
MODEL_GROUP = "concbench.models"
NAME = re.compile(r"[a-z][a-z0-9_.-]*")
KINDS = ("cpu", "io")


class PluginError(ValueError):
    """A plugin that cannot be used, in one line that names it."""


class Plugin:
    """One entry point (or a module's workload): where it comes from and,
    once loaded and checked, its class."""

    def __init__(self, group, name, value, distribution="", version="", module=""):
        self.group, self.name, self.value = group, name, value
        self.distribution, self.version, self.module = distribution, version, module
        self._class = self._error = None

    def __str__(self):
        from concbench import schema

        kind = schema.WORKLOAD if self.group == WORKLOAD_GROUP else schema.MODEL
        if self.module:
            return "%s %s from %s" % (kind, self.name, self.module)
        return "%s plugin %s (%s %s, %s)" % (kind, self.name, self.distribution,
                                             self.version, self.value)

    def load(self):
        """The checked class; PluginError if it cannot be used."""
        if self._class is None and self._error is None:
            try:
                self._class = self._check(self._import())
                self._class.concbench_source = self
            except PluginError as exc:
                self._error = exc
        if self._error is not None:
            raise self._error
        return self._class

    def broken(self):
        """Why it cannot be used ("" if it can)."""
        try:
            self.load()
        except PluginError as exc:
            return str(exc)
        return ""

    def _import(self):
        module, _, attribute = self.value.partition(":")
        try:
            found = importlib.import_module(module)
            for part in attribute.split(".") if attribute else ():
                found = getattr(found, part)
        except Exception as exc:
            raise PluginError("%s: cannot be loaded: %s: %s"
                              % (self, type(exc).__name__, exc)) from None
        return found

    def _check(self, found):
        if self.group == WORKLOAD_GROUP:
            return check_workload(self, getattr(found, "concbench_workload", found))
        return check_model(self, found)


def _overrides(cls, base, method):
    return getattr(cls, method, None) is not getattr(base, method)


def check_workload(plugin, cls):
    from concbench.workloads.base import Option, Workload

    if not (isinstance(cls, type) and issubclass(cls, Workload)):
        raise PluginError("%s: %r is not a subclass of concbench.workloads.base."
                          "Workload" % (plugin, cls))
    if cls.name != plugin.name:
        raise PluginError("%s: its class is named %r, not %r"
                          % (plugin, cls.name, plugin.name))
    if not isinstance(cls.name, str) or not NAME.fullmatch(cls.name):
        raise PluginError("%s: a workload's name is lower-case letters, digits, "
                          "'_', '-' and '.'" % plugin)
    if cls.kind not in KINDS:
        raise PluginError("%s: kind is %r, not one of %s" % (plugin, cls.kind,
                                                             ", ".join(KINDS)))
    missing = [m for m in ("make_items", "sync_function") if not _overrides(cls, Workload, m)]
    if missing:
        raise PluginError("%s: %s has no %s()" % (plugin, cls.__name__,
                                                  " and no ".join(missing)))
    if not all(isinstance(option, Option) for option in cls.OPTIONS):
        raise PluginError("%s: OPTIONS must hold concbench.workloads.base.Option "
                          "objects" % plugin)
    return cls


def check_model(plugin, cls):
    from concbench.models.base import Model

    if not (isinstance(cls, type) and issubclass(cls, Model)):
        raise PluginError("%s: %r is not a subclass of concbench.models.base.Model"
                          % (plugin, cls))
    if cls.family != plugin.name:
        raise PluginError("%s: its class's family is %r, not %r"
                          % (plugin, cls.family, plugin.name))
    for attribute in ("OWNS", "PATTERN"):
        try:
            re.compile(getattr(cls, attribute))
        except (TypeError, re.error):
            raise PluginError("%s: %s must be a regular expression of the family's "
                              "model names" % (plugin, attribute)) from None
    missing = [m for m in ("name", "run") if not _overrides(cls, Model, m)]
    if missing:
        raise PluginError("%s: %s has no %s" % (plugin, cls.__name__,
                                                " and no ".join(missing)))
    return cls


# -- discovery ---------------------------------------------------------------------

# The installed plugins, read once: process state, as the installed
# distributions are.
_found = None


def discovered(group):
    """The group's plugins, sorted by name. The installed distributions are
    read once per process, for both groups: every pyperf worker builds the
    matrix again, and each reading costs milliseconds there (measured in
    546f551: git show 546f551)."""
    global _found
    if _found is None:
        import importlib.metadata

        points = importlib.metadata.entry_points()
        _found = {}
        for name in (WORKLOAD_GROUP, MODEL_GROUP):
            _found[name] = []
            for point in points.select(group=name):
                dist = getattr(point, "dist", None)
                _found[name].append(Plugin(name, point.name, point.value,
                                           dist.metadata["Name"] if dist else "?",
                                           dist.version if dist else "?"))
        for plugins in _found.values():
            plugins.sort(key=lambda p: (p.name, p.distribution))
    return list(_found.get(group, ()))


def added(group, builtin):
    """The group's plugins by name, after the built-in names; PluginError
    when two of them claim one name, or one claims a built-in's."""
    found = {}
    for plugin in discovered(group) + module_workloads(group):
        if plugin.name in builtin:
            raise PluginError("%s: %s is a built-in name" % (plugin, plugin.name))
        if plugin.name in found:
            raise PluginError("%s and %s claim the same name, %s"
                              % (found[plugin.name], plugin, plugin.name))
        found[plugin.name] = plugin
    return found


# -- --workload-module ---------------------------------------------------------------

# The --workload-module files this process was given: process state.
_modules = []


def add_workload_module(spec):
    """Import FILE.py or package.module and register the workloads it
    defines; PluginError in one line if it cannot be."""
    if spec in [m for m, _ in _modules]:
        return
    if spec.endswith(".py") or os.sep in spec:
        path = os.path.abspath(spec)
        if not os.path.isfile(path):
            raise PluginError("--workload-module %s: no such file" % spec)
        # Importable by name, so that spawned pool processes find it too.
        folder, name = os.path.split(path[:-3] if path.endswith(".py") else path)
        if folder not in sys.path:
            sys.path.insert(0, folder)
    else:
        name = spec
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        raise PluginError("--workload-module %s: cannot be imported: %s: %s"
                          % (spec, type(exc).__name__, exc)) from None
    plugins = module_plugins(module, spec)
    if not plugins:
        raise PluginError("--workload-module %s: defines no workload (a Workload "
                          "subclass with a name, or a function decorated with "
                          "concbench.workloads.simple.workload)" % spec)
    for plugin in plugins:
        plugin.load()
    _modules.append((spec, plugins))


def module_plugins(module, spec):
    from concbench.workloads.base import Workload

    found = []
    for attribute, value in sorted(vars(module).items()):
        cls = getattr(value, "concbench_workload", value)
        if (isinstance(cls, type) and issubclass(cls, Workload) and cls.name
                and getattr(value, "__module__", None) == module.__name__):
            found.append(Plugin(WORKLOAD_GROUP, cls.name, "%s:%s" % (module.__name__, attribute),
                                module=spec))
    return found


def module_files():
    """The files given as --workload-module FILE.py, as absolute paths: the
    code a cluster of the user's can be sent (``models.dask``)."""
    return [os.path.abspath(spec) for spec, _ in _modules
            if spec.endswith(".py") or os.sep in spec]


def module_workloads(group):
    if group != WORKLOAD_GROUP:
        return []
    return [plugin for _, plugins in _modules for plugin in plugins]


def source_metadata(cls, kind):
    """What the metadata says of where a plugin's class came from (``kind``:
    schema.WORKLOAD or schema.MODEL)."""
    from concbench import schema

    plugin = getattr(cls, "concbench_source", None)
    if plugin is None:
        return {}
    keys = schema.PLUGIN_KEYS[kind]
    if plugin.module:
        return {keys[2]: plugin.module}
    return {keys[0]: plugin.distribution, keys[1]: plugin.version}
