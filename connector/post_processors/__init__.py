"""Debezium's post-processors (``post.processors``): run on each change event before the transforms."""
