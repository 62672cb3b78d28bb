"""confluent-kafka's registry client and serializers import with the pinned dependencies, and say nothing.

confluent-kafka declares what they import only as extras ([avro], [json], [schemaregistry]); pyproject pins
those packages one by one, so a new confluent-kafka that imports one more package (2.11: orjson and authlib at
module level) fails here, in seconds, not in the middle of a rehearsal. A warning at import would print on the
console of every command that decodes records, so warnings are errors in this fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys

IMPORTS = """
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
"""


def test_the_registry_client_and_the_avro_and_json_serializers_import_without_a_warning() -> None:
    run = subprocess.run([sys.executable, "-W", "error", "-c", IMPORTS], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr.strip().splitlines()[-1:]
    assert run.stderr == ""
