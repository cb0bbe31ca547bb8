"""What Elasticsearch and OpenSearch share: their REST APIs are nearly identical, so each of
their folders (``systems/elasticsearch/``, ``systems/opensearch/``) only names its distribution
and subclasses the bases here. One concern per module:

* :mod:`.http`      -- :class:`HttpClient` (keep-alive HTTP/1.1, JSON via orjson),
  :class:`SearchEngineError`, :func:`server_version`;
* :mod:`.jvm`       -- the JDK to run on (:func:`find_java_home`) and the heap (:func:`heap_size`);
* :mod:`.node`      -- :class:`SearchNode`, the managed single-node cluster in the work directory
  (a :class:`~docbench.servers.managed.ManagedServer`), and :class:`SearchCluster`, N of them;
* :mod:`.engine`    -- :class:`SearchEngineBase`, the engine handle (install state,
  availability, lifecycle, URL mode, connections, the serving JVM, versions, modules);
* :mod:`.index`     -- what every workload does to its own index (create, refresh, count, merge);
* :mod:`.loader`    -- :class:`BulkLoader`, ``_bulk`` all or nothing per batch;
* :mod:`.sizes`     -- the size of an index (``_stats``, ``_disk_usage`` or Lucene files);
* :mod:`.lucene`    -- Lucene's files on disk (compound files read part by part);
* :mod:`.leases`    -- soft-deletes retention leases (what a merge may drop, and when);
* :mod:`.session`   -- :class:`SearchSession`, the analytics queries' aggregation requests;
* :mod:`.analytics`, :mod:`.updates`, :mod:`.storage` -- the workload adapters' bases.

``setup.sh`` here installs either distribution (``setup.sh elasticsearch|opensearch VERSION``);
each folder's own ``setup.sh`` runs it with its distribution and version, so ``docbench setup
NAME`` finds it. ``elasticsearch9`` and ``opensearch2`` are other versions of the two: their
engines and adapters subclass the ``elasticsearch`` and ``opensearch`` ones.
"""
