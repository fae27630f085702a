"""Hangar's cluster agent: the control plane's hands on a Ray cluster (docs/cluster.md)."""
