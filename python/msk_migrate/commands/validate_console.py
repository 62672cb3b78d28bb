"""What ``validate`` shows while it runs: progress on a console that wants it, and ``--verbose``'s client logs."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from rich.console import Console

from ..cliutil import human
from ..outcome import quiet


def console_for(output: str) -> tuple[Console, bool]:
    """The console of ``output`` (stderr when stdout carries JSON) and whether it shows progress: a terminal, or
    ``--output text``."""
    con = human(output)
    return con, con.is_terminal or output == "text"


def progress_to(progress: Callable[[Console], AbstractContextManager[Any]], output: str) -> AbstractContextManager[Any]:
    """``progress(console)`` where progress is shown, else the no-op ``say``."""
    con, show = console_for(output)
    return progress(con) if show else nullcontext(quiet)


@contextmanager
def client_logs_to_stderr(spark: Any, verbose: bool) -> Iterator[None]:
    """--verbose: librdkafka's lines (the one client logger of access.admin) on stderr for this run only."""
    if not verbose:
        yield
        return
    import logging

    from ..validation import spark_local
    from ..validation.kafka_meta import client_logger

    spark_local.VERBOSE = True  # a local session started later logs Spark's WARN lines to stderr
    log = client_logger()
    handler = logging.StreamHandler(sys.stderr)
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.DEBUG)
    if spark is not None:
        spark.sparkContext.setLogLevel("WARN")
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
