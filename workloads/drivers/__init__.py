"""The clients of the workloads that talk to a server (db, http), kept apart
from the workloads' options, set-up and checks."""
