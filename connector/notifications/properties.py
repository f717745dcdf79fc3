"""The notification properties, declared for ``connector.config``'s table."""

from __future__ import annotations

from mysql_cdc_base.properties import Property, prop

SINK, LOG, JMX, IN_PROCESS = "sink", "log", "jmx", "in-process"
CHANNELS = (SINK, LOG, JMX, IN_PROCESS)
TOPIC_KEY = "notification.sink.topic.name"
CHANNELS_KEY = "notification.enabled.channels"

NOTIFICATION_PROPERTIES: tuple[Property, ...] = (
    prop(
        CHANNELS_KEY,
        "",
        "Where notifications about the initial and incremental snapshots go: sink (records on "
        "notification.sink.topic.name), log (INFO lines), jmx (the metrics endpoint's /notifications), "
        "in-process (callbacks of the embedded API). Empty: none.",
        kind="choice-list",
        choices=CHANNELS,
    ),
    prop(TOPIC_KEY, doc="The topic of the sink channel's notification records (required with sink)."),
)
