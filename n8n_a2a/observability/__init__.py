"""What the adapter tells its operators: Prometheus metrics and log lines."""
