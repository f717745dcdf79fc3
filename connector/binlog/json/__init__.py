"""MySQL's binary JSON in the binlog: decoding with opaque values (binary), partial updates (diff),
and the text Debezium's binlog client renders (render)."""
