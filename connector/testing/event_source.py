"""An in-memory binlog: scripted events fed to the real streaming source, without a server.

Work in progress (issue #30 item 5): the scripted events and the source that runs them follow.
"""
