"""The images msk-migrate ships, in build and push order."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImageSpec:
    name: str
    #: Dockerfile, relative to the repository root (which is the build context).
    dockerfile: str
    #: Repository paths baked into the image: a change there that is not committed marks the build dirty.
    inputs: tuple[str, ...]
    #: Whether the KAFKA_VERSION build argument applies.
    kafka_version_arg: bool = False


IMAGES: dict[str, ImageSpec] = {
    spec.name: spec
    for spec in (
        ImageSpec(
            "kafka-connect",
            "images/kafka-connect/Dockerfile",
            ("jvm", "images/kafka-connect", "prometheus/jmx-exporter"),
            kafka_version_arg=True,
        ),
        ImageSpec("prometheus", "images/prometheus/Dockerfile", ("images/prometheus", "prometheus/prometheus.yml", "prometheus/rules")),
        ImageSpec("grafana", "images/grafana/Dockerfile", ("images/grafana", "grafana")),
        ImageSpec("operator", "images/operator/Dockerfile", ("images/operator", "python", "pyproject.toml", "requirements.lock", "jvm/pom.xml")),
    )
}

IMAGE_NAMES: tuple[str, ...] = tuple(IMAGES)

#: ECS Fargate tasks run linux/amd64 (the stacks do not set an ARM runtime platform).
PLATFORM = "linux/amd64"
