"""A topic's partition count and configs as a cluster describes them (DescribeConfigs): a value, no client."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TopicConfigs:
    name: str
    partitions: int
    configs: dict[str, str] = field(default_factory=dict)  #: every config value
    overrides: dict[str, str] = field(default_factory=dict)  #: set on the topic itself

    @property
    def log_append_time(self) -> bool:
        """The broker stamps records (``message.timestamp.type=LogAppendTime``): timestamps differ per cluster."""
        return self.configs.get("message.timestamp.type", "CreateTime") == "LogAppendTime"

    @property
    def compacted(self) -> bool:
        return "compact" in self.configs.get("cleanup.policy", "delete")
