"""What a snapshot does, as chosen by its properties: the built-in snapshot.mode, snapshot.locking.mode and snapshot.query.mode (implementations of ``snapshot.spi``)."""
