"""Workload registry: adding a workload is one file plus one line here.

Classes are named as "module:Class" and imported on first use, so that a
worker process imports only the libraries of the benchmark it runs.
"""

import importlib

REGISTRY = {
    "encode": "workloads.encode:Encode",
    "rotate": "workloads.rotate:Rotate",
    "sleep": "workloads.sleep:Sleep",
    "http": "workloads.http:Http",
    "db": "workloads.db:Db",
}


def get(name):
    module, _, cls = REGISTRY[name].partition(":")
    return getattr(importlib.import_module(module), cls)
