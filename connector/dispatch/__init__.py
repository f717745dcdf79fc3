"""Stage 3, dispatch: the one ``EventDispatcher`` every source hands its events to (filter, table
structure, convert, build the complete record, emit), with the table filters and the schema state
(table model plus schema history) it consults."""
