"""Notifications about snapshots (``notification.enabled.channels``): ``service`` sends them to the
channels, ``snapshots`` words Debezium's initial and incremental snapshot notifications."""

from connector.notifications.properties import NOTIFICATION_PROPERTIES
from connector.notifications.service import Notification, NotificationService

__all__ = ["NOTIFICATION_PROPERTIES", "Notification", "NotificationService"]
