"""msk-migrate: migrate self-managed Apache Kafka to Amazon MSK with MirrorMaker 2 on ECS Fargate."""

from __future__ import annotations


def _version() -> str:
    """pyproject.toml's version, from the installed distribution's metadata. Inside the EMR/Glue zip
    (no distribution metadata) it comes from the ``VERSION`` file the packager writes beside this one."""
    from importlib import metadata, resources

    try:
        return metadata.version("msk-migrate")
    except metadata.PackageNotFoundError:
        try:
            return (resources.files(__name__) / "VERSION").read_text().strip()
        except (FileNotFoundError, NotADirectoryError, OSError):
            return "unknown"


__version__ = _version()
