"""Several chunks per incremental snapshot window (``incremental.snapshot.max.threads`` > 1).

Work in progress: the window's rows are read as key sub-ranges by the chunked snapshot's reader
processes (``snapshot.chunked.ReaderPool``) and merged back in key order.
"""
