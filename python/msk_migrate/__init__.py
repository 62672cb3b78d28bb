"""msk-migrate: migrate self-managed Apache Kafka to Amazon MSK with MirrorMaker 2 on ECS Fargate."""

__version__ = "0.1.0"
