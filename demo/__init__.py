"""The README's demo: an example workflow, the adapter in front of it, an A2A conversation."""
