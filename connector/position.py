"""Where in the server's binlog something happened."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class BinlogPosition:
    """A binlog coordinate: file name, byte position, and the executed GTID set at that point.

    ``gtids`` is the server's own text form: MySQL ``uuid:1-5,uuid2:1-3`` (newlines removed) or
    MariaDB ``domain-server-seq[,...]``; None when GTIDs are off.
    """

    file: str
    pos: int
    gtids: str | None = None

    @property
    def file_number(self) -> int:
        """The numeric extension (``mysql-bin.000042`` → 42), used to order positions."""
        _, _, ext = self.file.rpartition(".")
        return int(ext) if ext.isdigit() else 0

    def __str__(self) -> str:
        text = f"{self.file}:{self.pos}"
        return f"{text} (gtids {self.gtids})" if self.gtids else text
