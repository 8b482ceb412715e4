"""The tools behind the documentation's claims, kept out of the package
(the wheel installs none of them): the simulation of runs of known truth
that drives bench.py's own decision path (``simulation``, its worlds and
noise in ``synthetic``, its scoring in ``scoring``, what giving up saves in
``given_up``), the numbers the pages quote (``doc_numbers``, read by the
docs build), and the scripts that measured the harness and the rounds
(``measure_*``, ``bare_models``). Run them from the checkout:
``python -m research.simulation --help``."""
