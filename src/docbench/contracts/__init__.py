"""The contracts between workloads and systems.

Below ``systems/`` and ``workloads/`` alike: a system implements these abstract classes, a
workload calls them, and neither imports the other's modules.

* :mod:`.common` -- data both sides speak (Variant, Availability, StorageSize, BatchRejected);
* :mod:`.engine` -- the engine handle: install state, lifecycle, URL mode, connections, pids;
* :mod:`.analytics`, :mod:`.updates`, :mod:`.storage`, :mod:`.throughput` -- per workload, what
  it needs from a system, with default implementations of every optional hook;
* :mod:`.ycsb`, :mod:`.mixes`, :mod:`.storage_documents` -- the documents and operation mixes
  the contracts speak of.
"""
