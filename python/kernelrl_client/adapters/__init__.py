"""Thin adapters of KernelEnv to RL frameworks; each imports its framework only when used."""
