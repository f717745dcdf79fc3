"""Reading the captured tables' rows: the serial and parallel scans, the chunked reader processes and the key-ordered chunks of incremental snapshots."""
