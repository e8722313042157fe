"""The package's own machinery, not part of its public API: names here may change without notice.

* :mod:`.jit`: the decorator every compiled kernel is defined with, where compiled code is cached,
  keeping it fresh, and compiling ahead of use with a progress report;
* :mod:`.files`: atomic writes (a file is the previous one or the complete new one, never truncated);
* :mod:`.threads`: one BLAS thread per process where games run in parallel processes;
* :mod:`.shorten`: huge numbers shortened for error messages;
* :mod:`.extras`: how a message tells the user to install an optional extra, and the ``requires``
  block every import of an optional package sits in.

Importing this package imports none of them (nor numba).
"""
