"""A pair of real Apicurio Registries (source and target), in-memory, on 127.0.0.1 free ports.

Import the fixture into a test module: ``from tests.integration.registry_fixtures import registry_pair``.
Session-scoped: both registries start once (about 10-20 s each, in parallel) and are stopped at teardown.
Tests that need empty registries use subjects of their own (e.g. a uuid prefix) rather than new registries.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from msk_migrate.local.schema_registry import RegistryProcess, start_registry


@pytest.fixture(scope="session")
def registry_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RegistryProcess, RegistryProcess]]:
    workdir = tmp_path_factory.mktemp("registries")
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(start_registry, workdir, f"{role}-registry", None, 180) for role in ("source", "target")]
        started: list[RegistryProcess] = []
        errors: list[BaseException] = []
        for f in futures:
            try:
                started.append(f.result())
            except BaseException as exc:  # the other one still has to be stopped
                errors.append(exc)
    if errors:
        for reg in started:
            reg.stop()
        raise errors[0]
    source, target = started
    try:
        yield source, target
    finally:
        source.stop()
        target.stop()
