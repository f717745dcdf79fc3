"""The source server: client connections under ``database.*`` and ``database.ssl.*``
(``connection``, ``tls``) and the start-up checks of its settings and grants."""
