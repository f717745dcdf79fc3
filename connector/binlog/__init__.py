"""Stage 1, reading: binlog events from a server (``server_stream``) or from archived files
(``files``), parsed by mysql-replication (``packets``, with compressed transactions expanded and the
MySQL 8/9 parts the library lacks in ``library_support``, ``gtid_events``, ``mysql_json``,
``json_diff``), checked for what cannot be represented (``guard``), row images decoded by generated
per-table readers (``row_decoder``)."""
