"""The storage workload (issue #7): the classic PostgreSQL TOAST experiment on every system.

Documents ``{"key": ..., "payload": ...}`` whose payload is one large string of a given size
and entropy are inserted into each system under each of its storage settings (variants
declared by ``docbench.systems.<name>.storage_matrix``); per cell docbench records the insert
time, the size on disk (with TOAST tables / overflow pages / indexes) and any refusal.

* ``documents.py`` -- the deterministic document generator (random / repetitive / text);
* ``target.py``    -- the protocol a system's ``storage_matrix`` module implements;
* ``runner.py``    -- ``docbench run --workload storage``: cells, timing, result files;
* ``report.py``    -- the tables of the report.
"""
