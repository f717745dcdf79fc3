"""Test support for users of mysql-cdc: throwaway servers, the fake connector and the pytest plugin."""
