"""What ``mysql-cdc run`` imports before its first event (issue 31: time to the first event).

A run into the jsonl sink must not import the optional heavy dependencies that only other settings
need (Kafka sink or stores, metrics, rich output, Spark): each costs start-up time on every run.
"""
