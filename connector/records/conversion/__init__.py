"""Column conversion, one module per MySQL type family, and the registry that picks them.

Each family converts one decoded form: the binlog row decoder produces it directly, and the snapshot's
text is adapted to it at the edge, so streaming and snapshot share one conversion per family.
"""
