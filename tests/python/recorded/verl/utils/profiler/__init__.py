"""Recorded interface of verl.utils.profiler.simple_timer (verl 0.9.1, verl/utils/profiler/performance.py):
adds the seconds its block took to timing_raw[name]."""

import time
from contextlib import contextmanager
from typing import Dict

RECORDED = True


@contextmanager
def simple_timer(name: str, timing_raw: Dict[str, float]):
    start = time.perf_counter()
    yield
    timing_raw[name] = timing_raw.get(name, 0.0) + time.perf_counter() - start
