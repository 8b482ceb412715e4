"""What both the run and the report read of a bench.py file: each
benchmark's rows and paired speedups, their confidence sequences, and which
questions they answer. The run decides from it what to measure next; the
report words it."""
