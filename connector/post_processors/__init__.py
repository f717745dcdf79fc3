"""Debezium's post-processors (``post.processors``): ``chain`` builds them from the configuration,
``reselect`` is Debezium's ``ReselectColumnsPostProcessor``, ``properties`` declares the keys."""
