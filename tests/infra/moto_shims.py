"""moto's server with the smallest shims the deploy rehearsal needs, each naming the moto limitation it covers.

Test code only (never the product). The classes are WSGI middlewares in front of moto's own application,
each answering or correcting exactly one kind of request and passing everything else through untouched;
the functions replace one method or constant of moto's models (its own extension points), in this process:

==============================  =================================================================
shim                            moto 5.0 limitation
==============================  =================================================================
``MskConfigurations``           no MSK configuration API (CreateConfiguration & co. answer 404)
``MskClusterReady``             a cluster stays ``CREATING`` forever; no GetBootstrapBrokers, no ListNodes;
                                DescribeCluster of an unknown ARN answers 500 (MSK: 404 NotFoundException)
``ElbCapacityReservation``      ELBv2 DescribeCapacityReservation answers 500 (the provider retries for minutes)
``S3LifecycleReady``            GetBucketLifecycleConfiguration lacks S3's default-minimum-object-size header, so
                                the provider waits its full 3 minutes for the configuration to "propagate", then fails
``S3VersionedDeleteObjects``    DeleteObjects naming versions of a versioned bucket answers 500
``S3LockChecksums``             a PutObject to a bucket under Object Lock is refused without Content-MD5 (S3 also
                                accepts the x-amz-checksum-* the SDKs send by default)
``S3AwsChunkedPut``             an aws-chunked PutObject (the Java SDK's signed chunks over HTTP) is stored undecoded
``S3RequestSeen``               the bucket-policy check is not given the request (see ``s3_policy_conditions``)
``Ec2RetryReplay``              under load moto may answer an EC2 call after the SDK gave up on it; the SDK's retry
                                of an AuthorizeSecurityGroupIngress/Egress moto had completed then meets
                                InvalidPermission.Duplicate (seen once on a loaded CI machine). A retry (same
                                ``amz-sdk-invocation-id``) of a call moto answered 200 gets that answer again
``JsonTimestamps``              ECR, EMR Serverless and Glue return ``createdAt``/``updatedAt``/``CreatedOn``/... as strings,
                                not epoch numbers
``Route53ZoneIds``              hosted zone ids without Route 53's leading ``Z`` (the environment file refuses them)
``GlueConnections``             no Glue connection API (CreateConnection, GetConnection, DeleteConnection answer
                                "not yet implemented"); its tags go to moto's Glue tagger, whose GetTags serves any ARN
:func:`s3_logging_policy_check`  PutBucketLogging's check of the target bucket's policy reads ``Principal`` only as
                                an object and ``Resource`` only as one string: ``"Principal": "*"`` (a TLS-only
                                statement) answers 500, a ``Resource`` list is refused (InvalidTargetBucketForLogging)
:func:`s3_policy_conditions`    bucket policies are evaluated without their ``Condition``s: the TLS-only statement
                                (Deny ``s3:*`` when ``aws:SecureTransport`` is false) would deny every object request,
                                the ledger's (Deny ``s3:PutObject`` when ``s3:if-none-match`` is null) every event
                                write; the two forms the stacks use are evaluated on the request
                                (``S3RequestSeen`` keeps it), any other condition is still ignored as moto does;
                                deleting one version is checked as ``s3:DeleteObjectVersion`` (moto: ``DeleteObject``)
:func:`emr_serverless_created`  a new EMR Serverless application is ``STARTED`` at once; EMR's is ``CREATED``
                                (the provider waits for exactly that and fails on anything else)
:func:`msk_cluster_arns`        MSK cluster ARNs without the cluster name (``cluster/<uuid>``, not
                                ``cluster/<name>/<uuid>-<n>``; the environment file and IAM scopes need the name)
==============================  =================================================================

:func:`start` serves moto's application behind them on a free 127.0.0.1 port (a thread of this process,
like moto's ThreadedMotoServer; ``MOTO_ACCOUNT_ID`` is read per request), over HTTPS. :class:`PlainHttp`
serves it behind a test's own shims (the job runs' stand-ins, ``S3AwsChunkedPut``) over plain HTTP.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import threading
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from xml.sax.saxutils import escape

Environ = dict[str, Any]
WsgiApp = Callable[[Environ, Callable], Iterable[bytes]]


@dataclass
class Reply:
    status: str
    headers: list[tuple[str, str]]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


def call(app: WsgiApp, environ: Environ, body: bytes | None = None) -> Reply:
    """Run ``app`` on ``environ`` (with ``body`` as the request body when given) and collect its reply."""
    env = dict(environ)
    if body is not None:
        env["wsgi.input"] = io.BytesIO(body)
        env["CONTENT_LENGTH"] = str(len(body))
    captured: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable:
        captured["status"], captured["headers"] = status, list(headers)
        return lambda _data: None

    chunks = app(env, start_response)
    try:
        data = b"".join(chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close:
            close()
    return Reply(captured["status"], captured["headers"], data)


def respond(start_response: Callable, status: str, body: bytes, content_type: str) -> list[bytes]:
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [body]


def json_reply(start_response: Callable, doc: Any, status: str = "200 OK") -> list[bytes]:
    return respond(start_response, status, json.dumps(doc).encode(), "application/json")


def service_of(environ: Environ) -> str:
    """The signing service of a SigV4 request (``Credential=KEY/DATE/REGION/SERVICE/aws4_request``)."""
    m = re.search(r"Credential=[^/]+/[^/]+/([^/]+)/([^/]+)/", environ.get("HTTP_AUTHORIZATION", ""))
    return m.group(2) if m else ""


def raw_path(environ: Environ) -> str:
    """The request path as sent (ARNs in MSK paths stay one %-encoded segment; PATH_INFO is decoded)."""
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI") or environ.get("PATH_INFO", "")
    return urllib.parse.urlsplit(raw).path


def read_body(environ: Environ) -> bytes:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    return environ["wsgi.input"].read(length) if length else b""


def replace_body(reply: Reply, body: bytes) -> Reply:
    headers = [(k, v) for k, v in reply.headers if k.lower() != "content-length"] + [("Content-Length", str(len(body)))]
    return Reply(reply.status, headers, body)


def send(start_response: Callable, reply: Reply) -> list[bytes]:
    start_response(reply.status, reply.headers)
    return [reply.body]


class Shim:
    """One middleware: ``handles`` picks its requests, ``handle`` answers them (``self.app`` is moto)."""

    limitation = ""

    def __init__(self, app: WsgiApp) -> None:
        self.app = app

    def handles(self, environ: Environ) -> bool:
        raise NotImplementedError

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        raise NotImplementedError

    def __call__(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        if self.handles(environ):
            return self.handle(environ, start_response)
        return self.app(environ, start_response)


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass
class _Configuration:
    arn: str
    name: str
    description: str
    kafka_versions: list[str]
    created: str
    revisions: dict[int, dict[str, Any]] = field(default_factory=dict)

    def latest(self) -> dict[str, Any]:
        rev = max(self.revisions)
        r = self.revisions[rev]
        return {"creationTime": r["creationTime"], "description": r["description"], "revision": rev}

    def describe(self) -> dict[str, Any]:
        return {"arn": self.arn, "name": self.name, "description": self.description, "kafkaVersions": self.kafka_versions,
                "creationTime": self.created, "latestRevision": self.latest(), "state": "ACTIVE"}


class MskConfigurations(Shim):
    limitation = "moto has no MSK configuration API (CreateConfiguration answers 404)"
    _PATH = re.compile(r"^/v1/configurations(?:/(?P<arn>arn.+?))?(?:/revisions(?:/(?P<rev>\d+))?)?$")

    def __init__(self, app: WsgiApp) -> None:
        super().__init__(app)
        self.configs: dict[str, _Configuration] = {}
        self.lock = threading.Lock()

    def handles(self, environ: Environ) -> bool:
        return service_of(environ) == "kafka" and bool(self._PATH.match(raw_path(environ)))

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        import os

        m = self._PATH.match(raw_path(environ))
        assert m is not None
        method = environ["REQUEST_METHOD"]
        arn = urllib.parse.unquote(m.group("arn") or "")
        with self.lock:
            if not arn and method == "POST":
                body = json.loads(read_body(environ) or b"{}")
                account = os.environ.get("MOTO_ACCOUNT_ID", "123456789012")
                region = re.search(r"Credential=[^/]+/[^/]+/([^/]+)/", environ.get("HTTP_AUTHORIZATION", "")).group(1)  # type: ignore[union-attr]
                new_arn = f"arn:aws:kafka:{region}:{account}:configuration/{body['name']}/{uuid.uuid4()}-1"
                cfg = _Configuration(new_arn, body["name"], body.get("description", ""), body.get("kafkaVersions", []), _now())
                cfg.revisions[1] = {"creationTime": cfg.created, "description": cfg.description, "serverProperties": body["serverProperties"]}
                self.configs[new_arn] = cfg
                return json_reply(start_response, {"arn": new_arn, "creationTime": cfg.created, "latestRevision": cfg.latest(),
                                                   "name": cfg.name, "state": "ACTIVE"})
            if not arn:
                return json_reply(start_response, {"configurations": [c.describe() for c in self.configs.values()]})
            cfg = self.configs.get(arn)
            if cfg is None:
                return json_reply(start_response, {"message": f"Configuration {arn} not found"}, "404 Not Found")
            if m.group("rev"):
                rev = cfg.revisions.get(int(m.group("rev")))
                if rev is None:
                    return json_reply(start_response, {"message": "revision not found"}, "404 Not Found")
                return json_reply(start_response, {"arn": arn, "revision": int(m.group("rev")), **rev})
            if method == "GET":
                return json_reply(start_response, cfg.describe())
            if method == "PUT":
                body = json.loads(read_body(environ) or b"{}")
                rev_no = max(cfg.revisions) + 1
                cfg.description = body.get("description", cfg.description)
                cfg.revisions[rev_no] = {"creationTime": _now(), "description": cfg.description, "serverProperties": body["serverProperties"]}
                return json_reply(start_response, {"arn": arn, "latestRevision": cfg.latest()})
            if method == "DELETE":
                del self.configs[arn]
                return json_reply(start_response, {"arn": arn, "state": "DELETING"})
        return json_reply(start_response, {"message": "unsupported"}, "400 Bad Request")


class MskClusterReady(Shim):
    limitation = "moto keeps an MSK cluster CREATING and has no GetBootstrapBrokers or ListNodes"
    #: The ARN is one %-encoded segment from the Go SDK and raw slashes from botocore.
    _CLUSTER = re.compile(r"^/(?:v1|api/v2)/clusters/(?P<arn>arn.+?)(?P<rest>/bootstrap-brokers|/nodes)?$")
    #: Port per bootstrap string, as MSK answers for private connectivity.
    PORTS: ClassVar[dict[str, int]] = {"bootstrapBrokerString": 9092, "bootstrapBrokerStringTls": 9094,
             "bootstrapBrokerStringSaslScram": 9096, "bootstrapBrokerStringSaslIam": 9098}

    def handles(self, environ: Environ) -> bool:
        return service_of(environ) == "kafka" and environ["REQUEST_METHOD"] == "GET" and bool(self._CLUSTER.match(raw_path(environ)))

    def _describe(self, environ: Environ, arn: str) -> dict[str, Any] | None:
        path = f"/v1/clusters/{urllib.parse.quote(arn, safe='')}"
        env = {**environ, "PATH_INFO": f"/v1/clusters/{arn}", "RAW_URI": path, "REQUEST_URI": path, "QUERY_STRING": ""}
        try:
            reply = call(self.app, env, b"")
        except KeyError:
            return None
        return reply.json().get("clusterInfo") if reply.status.startswith("200") else None

    @staticmethod
    def hosts(info: dict[str, Any]) -> list[str]:
        name, region = info["clusterName"], info["clusterArn"].split(":")[3]
        return [f"b-{i}.{name}.shim01.c2.kafka.{region}.amazonaws.com" for i in range(1, int(info.get("numberOfBrokerNodes", 3)) + 1)]

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        m = self._CLUSTER.match(raw_path(environ))
        assert m is not None
        arn = urllib.parse.unquote(m.group("arn"))
        rest = m.group("rest")
        if not rest:
            try:
                reply = call(self.app, environ)
            except KeyError:  # moto: a KeyError for an unknown ARN; MSK: 404 NotFoundException
                body = json.dumps({"message": f"Cluster {arn} not found"}).encode()
                start_response("404 Not Found", [("Content-Type", "application/json"), ("x-amzn-ErrorType", "NotFoundException"),
                                                 ("Content-Length", str(len(body)))])
                return [body]
            if reply.status.startswith("200"):
                doc = reply.json()
                for key in ("clusterInfo",):
                    if isinstance(doc.get(key), dict) and doc[key].get("state") == "CREATING":
                        doc[key]["state"] = "ACTIVE"
                reply = replace_body(reply, json.dumps(doc).encode())
            return send(start_response, reply)
        info = self._describe(environ, arn)
        if info is None:
            return json_reply(start_response, {"message": f"Cluster {arn} not found"}, "404 Not Found")
        hosts = self.hosts(info)
        if rest == "/bootstrap-brokers":
            return json_reply(start_response, {k: ",".join(f"{h}:{p}" for h in hosts) for k, p in self.PORTS.items()})
        subnets = (info.get("brokerNodeGroupInfo") or {}).get("clientSubnets") or ["subnet-shim"]
        nodes = [{"brokerNodeInfo": {"brokerId": float(i), "clientSubnet": subnets[(i - 1) % len(subnets)], "endpoints": [h]},
                  "instanceType": (info.get("brokerNodeGroupInfo") or {}).get("instanceType", "kafka.m7g.large"),
                  "nodeARN": f"{arn}/broker-{i}", "nodeType": "BROKER"} for i, h in enumerate(hosts, start=1)]
        return json_reply(start_response, {"nodeInfoList": nodes})


class ElbCapacityReservation(Shim):
    limitation = "moto's ELBv2 answers DescribeCapacityReservation with 500 (the provider retries for minutes)"

    def handles(self, environ: Environ) -> bool:
        if service_of(environ) != "elasticloadbalancing" or environ["REQUEST_METHOD"] != "POST":
            return False
        body = read_body(environ)
        environ["wsgi.input"] = io.BytesIO(body)  # moto reads it again when the request is not ours
        return b"Action=DescribeCapacityReservation" in body

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        xml = ('<DescribeCapacityReservationResponse xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/">'
               "<DescribeCapacityReservationResult><CapacityReservationState/></DescribeCapacityReservationResult>"
               f"<ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId></ResponseMetadata></DescribeCapacityReservationResponse>")
        return respond(start_response, "200 OK", xml.encode(), "text/xml")


class S3LifecycleReady(Shim):
    limitation = ("moto's GetBucketLifecycleConfiguration has no x-amz-transition-default-minimum-object-size header "
                  "(S3 answers all_storage_classes_128K by default): the provider then waits its full 3 minutes for "
                  "the configuration it put to show, and fails")
    HEADER = "x-amz-transition-default-minimum-object-size"

    def handles(self, environ: Environ) -> bool:
        return (service_of(environ) == "s3" and environ["REQUEST_METHOD"] == "GET"
                and "lifecycle" in urllib.parse.parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True))

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        reply = call(self.app, environ)
        if reply.status.startswith("200") and not any(k.lower() == self.HEADER for k, _ in reply.headers):
            reply = Reply(reply.status, [*reply.headers, (self.HEADER, "all_storage_classes_128K")], reply.body)
        return send(start_response, reply)


class S3VersionedDeleteObjects(Shim):
    limitation = "moto answers DeleteObjects naming versions of a versioned bucket with 500"

    def handles(self, environ: Environ) -> bool:
        return (service_of(environ) == "s3" and environ["REQUEST_METHOD"] == "POST"
                and "delete" in urllib.parse.parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True))

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        import xml.etree.ElementTree as ET

        body = read_body(environ)
        root = ET.fromstring(body)
        ns = root.tag.partition("}")[0] + "}" if root.tag.startswith("{") else ""
        quiet = (root.findtext(f"{ns}Quiet") or "").lower() == "true"
        deleted, errors = [], []
        for obj in root.findall(f"{ns}Object"):
            key, version = obj.findtext(f"{ns}Key") or "", obj.findtext(f"{ns}VersionId")
            query = urllib.parse.urlencode({"versionId": version}) if version else ""
            bucket_path = raw_path(environ).rstrip("/")
            raw = bucket_path + "/" + urllib.parse.quote(key) + (f"?{query}" if query else "")
            env = {**environ, "REQUEST_METHOD": "DELETE", "PATH_INFO": urllib.parse.unquote(bucket_path) + "/" + key, "RAW_URI": raw,
                   "REQUEST_URI": raw, "QUERY_STRING": query, "CONTENT_TYPE": ""}
            env.pop("HTTP_CONTENT_MD5", None)
            reply = call(self.app, env, b"")
            if reply.status[:1] == "2":
                deleted.append(f"<Deleted><Key>{escape(key)}</Key>" + (f"<VersionId>{escape(version)}</VersionId>" if version else "") + "</Deleted>")
            else:
                errors.append(f"<Error><Key>{escape(key)}</Key><Code>InternalError</Code><Message>{reply.status}</Message></Error>")
        xml = ('<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
               + ("" if quiet else "".join(deleted)) + "".join(errors) + "</DeleteResult>")
        return respond(start_response, "200 OK", xml.encode(), "application/xml")


class JsonTimestamps(Shim):
    limitation = ("moto's ECR, EMR Serverless and Glue return createdAt/updatedAt/imagePushedAt/lastEvaluatedAt (Glue: "
                  "CreatedOn/LastModifiedOn/StartedOn/CompletedOn) as strings; the AWS SDK expects epoch seconds and fails to decode the reply")
    SERVICES: ClassVar[frozenset[str]] = frozenset({"ecr", "emr-serverless", "glue"})
    _KEYS: ClassVar[frozenset[str]] = frozenset({"createdAt", "updatedAt", "imagePushedAt", "lastRecordedPullTime", "lastEvaluatedAt",
                                                 "CreatedOn", "LastModifiedOn", "StartedOn", "CompletedOn"})

    def handles(self, environ: Environ) -> bool:
        return service_of(environ) in self.SERVICES

    def _fix(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (self._epoch(v) if k in self._KEYS and isinstance(v, str) else self._fix(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [self._fix(v) for v in value]
        return value

    @staticmethod
    def _epoch(text: str) -> Any:
        try:
            return float(text)
        except ValueError:
            return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        reply = call(self.app, environ)
        if reply.status.startswith("200") and reply.body.startswith(b"{"):
            reply = replace_body(reply, json.dumps(self._fix(reply.json())).encode())
        return send(start_response, reply)


class Route53ZoneIds(Shim):
    limitation = ("moto's hosted zone ids do not start with Z as Route 53's do (the environment file refuses them): "
                  "every id leaves with a Z prefixed, and the Z is taken off again on the way in")
    _OUT = re.compile(rb"(/hostedzone/)([A-Z0-9]+)")
    _IN = re.compile(r"(/hostedzone/)Z([A-Z0-9]+)")

    def handles(self, environ: Environ) -> bool:
        return service_of(environ) == "route53"

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        env = {**environ, **{k: self._IN.sub(r"\1\2", environ[k]) for k in ("PATH_INFO", "RAW_URI", "REQUEST_URI") if k in environ}}
        reply = call(self.app, env)
        return send(start_response, replace_body(reply, self._OUT.sub(rb"\1Z\2", reply.body)))


#: Outermost first. Every shim the rehearsal uses; each names its moto limitation (``limitation``).
class S3LockChecksums(Shim):
    """Adds the ``Content-MD5`` moto wants to a PutObject that carries an ``x-amz-checksum-*`` instead (in a header
    or announced for the trailer): S3 accepts either on a bucket under Object Lock, and the SDKs (boto3, the
    provider's Go SDK) send the checksum by default. moto checks the header's presence only."""

    limitation = ("moto refuses a PutObject to a bucket with default Object Lock retention without Content-MD5; S3 also accepts "
                  "an x-amz-checksum-* header")

    def handles(self, environ: Environ) -> bool:
        if service_of(environ) != "s3" or environ["REQUEST_METHOD"] != "PUT" or "HTTP_CONTENT_MD5" in environ:
            return False
        return (any(k.startswith("HTTP_X_AMZ_CHECKSUM_") for k in environ) or "HTTP_X_AMZ_SDK_CHECKSUM_ALGORITHM" in environ
                or "x-amz-checksum-" in environ.get("HTTP_X_AMZ_TRAILER", ""))

    @staticmethod
    def payload(body: bytes, environ: Environ) -> bytes:
        """The object's bytes: an ``aws-chunked`` body (``<hex size>[;ext]\\r\\n<data>\\r\\n`` … ``0``, trailer) decoded."""
        if "aws-chunked" not in environ.get("HTTP_CONTENT_ENCODING", ""):
            return body
        out, rest = b"", body
        while rest:
            head, _, rest = rest.partition(b"\r\n")
            size = int(head.split(b";")[0] or b"0", 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2:]
        return out

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        import base64
        import hashlib

        # A streamed upload (Transfer-Encoding: chunked) has no Content-Length: read to its end.
        body = read_body(environ) if environ.get("CONTENT_LENGTH") else environ["wsgi.input"].read()
        md5 = base64.b64encode(hashlib.md5(self.payload(body, environ), usedforsecurity=False).digest()).decode()
        env = {k: v for k, v in environ.items() if k != "HTTP_TRANSFER_ENCODING"}
        return send(start_response, call(self.app, {**env, "HTTP_CONTENT_MD5": md5}, body))


class S3AwsChunkedPut(Shim):
    """Decodes an ``aws-chunked`` PutObject body (the AWS SDK for Java v2 signs each chunk and trails a checksum
    over plain HTTP) before moto stores it."""

    limitation = "moto 5.0 stores an aws-chunked PutObject body with chunk signatures as the object's bytes"

    def handles(self, environ: Environ) -> bool:
        return (service_of(environ) == "s3" and environ["REQUEST_METHOD"] == "PUT"
                and "aws-chunked" in environ.get("HTTP_CONTENT_ENCODING", ""))

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        body = read_body(environ) if environ.get("CONTENT_LENGTH") else environ["wsgi.input"].read()
        data = S3LockChecksums.payload(body, environ)
        encodings = [e for e in environ["HTTP_CONTENT_ENCODING"].split(",") if e.strip() not in ("aws-chunked", "")]
        env = {k: v for k, v in environ.items() if k not in ("HTTP_TRANSFER_ENCODING", "HTTP_CONTENT_ENCODING", "HTTP_X_AMZ_TRAILER")}
        if encodings:
            env["HTTP_CONTENT_ENCODING"] = ",".join(encodings)
        return send(start_response, call(self.app, {**env, "HTTP_X_AMZ_CONTENT_SHA256": "UNSIGNED-PAYLOAD"}, data))


_REQUEST = threading.local()


class Ec2RetryReplay(Shim):
    limitation = ("under load moto may answer an EC2 call after the SDK gave up on it: the retry of an "
                  "AuthorizeSecurityGroupIngress/Egress that moto had completed meets InvalidPermission.Duplicate")
    ACTIONS = (b"Action=AuthorizeSecurityGroupIngress", b"Action=AuthorizeSecurityGroupEgress")

    def __init__(self, app: WsgiApp) -> None:
        super().__init__(app)
        self.answered: dict[str, Reply] = {}  #: invocation id -> moto's 200 answer
        self.lock = threading.Lock()  #: a retry waits for the attempt before it to be answered

    def handles(self, environ: Environ) -> bool:
        if service_of(environ) != "ec2" or environ["REQUEST_METHOD"] != "POST":
            return False
        body = read_body(environ)
        environ["wsgi.input"] = io.BytesIO(body)  # moto reads it again when the request is not ours
        return any(a in body for a in self.ACTIONS) and bool(environ.get("HTTP_AMZ_SDK_INVOCATION_ID"))

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        invocation = environ["HTTP_AMZ_SDK_INVOCATION_ID"]
        with self.lock:
            reply = self.answered.get(invocation)
            if reply is None:
                reply = call(self.app, environ, read_body(environ))
                if reply.status.startswith("200"):
                    self.answered[invocation] = reply
        return send(start_response, reply)


class S3RequestSeen(Shim):
    """Passes every S3 request through, keeping its environ for :func:`s3_policy_conditions` while moto answers it.
    Innermost of :data:`SHIMS`, so the requests the other shims make on moto's app are the ones seen."""

    limitation = "moto's bucket-policy check is given the action and resource only, not the request its conditions are about"

    def handles(self, environ: Environ) -> bool:
        return service_of(environ) == "s3"

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        _REQUEST.environ = environ
        try:
            return self.app(environ, start_response)
        finally:
            _REQUEST.environ = None


class GlueConnections(Shim):
    """Glue's connection API (JSON 1.1, ``X-Amz-Target: AWSGlue.<Op>``) in memory, per account and region: what
    ``aws_glue_connection`` calls. Tags are kept by moto's own Glue tagger (GetTags, TagResource work on any ARN)."""

    limitation = "moto has no Glue connection API (CreateConnection & co. are not implemented)"
    _OPS = ("CreateConnection", "GetConnection", "GetConnections", "DeleteConnection", "UpdateConnection")

    def __init__(self, app: WsgiApp) -> None:
        super().__init__(app)
        self.connections: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()

    def handles(self, environ: Environ) -> bool:
        return environ.get("HTTP_X_AMZ_TARGET", "") in {f"AWSGlue.{op}" for op in self._OPS}

    @staticmethod
    def _not_found(start_response: Callable, name: str) -> list[bytes]:
        return respond(start_response, "400 Bad Request", json.dumps({"__type": "EntityNotFoundException",
                                                                      "message": f"Connection {name} not found"}).encode(),
                       "application/x-amz-json-1.1")

    def handle(self, environ: Environ, start_response: Callable) -> Iterable[bytes]:
        import os

        op = environ["HTTP_X_AMZ_TARGET"].split(".", 1)[1]
        body = json.loads(read_body(environ) or b"{}")
        account = os.environ.get("MOTO_ACCOUNT_ID", "123456789012")
        m = re.search(r"Credential=[^/]+/[^/]+/([^/]+)/", environ.get("HTTP_AUTHORIZATION", ""))
        region = m.group(1) if m else "us-east-1"
        with self.lock:
            if op == "GetConnections":
                listed = [c for (a, r, _n), c in self.connections.items() if (a, r) == (account, region)]
                return respond(start_response, "200 OK", json.dumps({"ConnectionList": listed}).encode(), "application/x-amz-json-1.1")
            given = body.get("ConnectionInput") or {}
            name = body.get("Name") or given.get("Name", "")
            key = (account, region, name)
            if op == "CreateConnection":
                if key in self.connections:
                    return respond(start_response, "400 Bad Request", json.dumps({"__type": "AlreadyExistsException",
                                                                                  "message": f"Connection {name} exists"}).encode(),
                                   "application/x-amz-json-1.1")
                now = dt.datetime.now(dt.UTC).timestamp()
                self.connections[key] = {**given, "CreationTime": now, "LastUpdatedTime": now, "Status": "READY"}
                if body.get("Tags"):
                    from moto.glue.models import glue_backends

                    glue_backends[account][region].tag_resource(f"arn:aws:glue:{region}:{account}:connection/{name}", body["Tags"])
                return respond(start_response, "200 OK", json.dumps({"CreateConnectionStatus": "READY"}).encode(), "application/x-amz-json-1.1")
            if key not in self.connections:
                return self._not_found(start_response, name)
            if op == "GetConnection":
                return respond(start_response, "200 OK", json.dumps({"Connection": self.connections[key]}).encode(), "application/x-amz-json-1.1")
            if op == "UpdateConnection":
                self.connections[key].update({**given, "LastUpdatedTime": dt.datetime.now(dt.UTC).timestamp()})
            else:  # DeleteConnection
                del self.connections[key]
            return respond(start_response, "200 OK", b"{}", "application/x-amz-json-1.1")


SHIMS: tuple[type[Shim], ...] = (
    MskConfigurations, MskClusterReady, ElbCapacityReservation, S3LifecycleReady, S3VersionedDeleteObjects, JsonTimestamps, Route53ZoneIds,
    S3LockChecksums, Ec2RetryReplay, S3RequestSeen, GlueConnections,
)


def msk_cluster_arns() -> None:
    """moto names a cluster ``arn:...:cluster/<uuid>``; MSK's ARNs are ``cluster/<name>/<uuid>-<n>`` (the
    environment file checks that form and the IAM scopes use the name). moto's own model hook
    (``FakeKafkaCluster._generate_arn``) makes them so, in this process's moto only."""
    from moto.kafka.models import FakeKafkaCluster

    def _generate_arn(self: Any) -> str:
        kind = "cluster" if self.cluster_type == "PROVISIONED" else "serverless-cluster"
        return f"arn:aws:kafka:{self.region_name}:{self.account_id}:{kind}/{self.cluster_name}/{self.cluster_id}-1"

    FakeKafkaCluster._generate_arn = _generate_arn


def condition_holds(condition: dict, environ: Environ) -> bool | None:
    """Whether a statement's ``Condition`` holds for the request ``environ``: evaluated for the two forms the
    stacks' bucket policies use (``Bool aws:SecureTransport``, ``Null s3:if-none-match``), None for any other."""
    results = []
    for operator, keys in condition.items():
        for key, value in keys.items():
            wanted = str(value).lower() == "true"
            if (operator, key) == ("Bool", "aws:SecureTransport"):
                results.append((environ.get("wsgi.url_scheme") == "https") == wanted)
            elif (operator, key) == ("Null", "s3:if-none-match"):
                results.append(("HTTP_IF_NONE_MATCH" not in environ) == wanted)
            else:
                return None
    return all(results)


def s3_policy_conditions() -> None:
    """moto's ``FakeBucket.get_permission`` ignores a statement's ``Condition`` (moto.iam.access_control: "TODO add
    support for the Resource and Condition parts"). Here a statement whose condition :func:`condition_holds`
    can evaluate applies only when it holds for the request :class:`S3RequestSeen` kept (outside a request: an
    HTTPS request without conditional headers, what every request to :class:`Server` is at least); a statement
    with any other condition applies unconditionally, as in moto."""
    from moto.iam.access_control import IAMPolicy, PermissionResult
    from moto.s3.models import FakeBucket

    def get_permission(self: Any, action: str, resource: str) -> Any:
        if self.policy is None:
            return PermissionResult.NEUTRAL
        environ = getattr(_REQUEST, "environ", None) or {"wsgi.url_scheme": "https"}
        if action == "s3:DeleteObject" and "versionId" in urllib.parse.parse_qs(environ.get("QUERY_STRING", "")):
            action = "s3:DeleteObjectVersion"  # S3 authorizes deleting one version as its own action; moto does not
        doc = json.loads(self.policy.decode())
        kept = []
        for st in doc["Statement"]:
            holds = condition_holds(st["Condition"], environ) if "Condition" in st else True
            if holds is not False:
                kept.append({k: v for k, v in st.items() if k != "Condition"})
        doc["Statement"] = kept
        return IAMPolicy(json.dumps(doc)).is_action_permitted(action, resource)

    FakeBucket.get_permission = get_permission


def emr_serverless_created() -> None:
    """moto's new applications start ``STARTED`` (its module constant ``APPLICATION_STATUS``); EMR's are
    ``CREATED`` until a job or StartApplication starts them. The constant is read at creation time."""
    import moto.emrserverless.models as models

    models.APPLICATION_STATUS = "CREATED"


def s3_logging_policy_check() -> None:
    """moto's ``FakeBucket._log_permissions_enabled_policy`` with IAM's forms: a principal may be ``"*"``,
    ``Service``/``Action``/``Resource`` may be a string or a list (moto's own model hook, this process only)."""
    from moto.s3.models import LOGGING_SERVICE_PRINCIPAL, FakeBucket

    def listed(value: Any) -> list[str]:
        return [value] if isinstance(value, str) else list(value or [])

    def _log_permissions_enabled_policy(target_bucket: Any, target_prefix: str | None) -> bool:
        if not target_bucket.policy:
            return False
        base = f"arn:{target_bucket.partition}:s3:::{target_bucket.name}"
        wanted = {f"{base}/{target_prefix or ''}*", f"{base}/*", base}
        for stmt in json.loads(target_bucket.policy.decode())["Statement"]:
            principal = stmt.get("Principal")
            services = listed(principal.get("Service")) if isinstance(principal, dict) else []
            if (LOGGING_SERVICE_PRINCIPAL in services and stmt.get("Effect") == "Allow"
                    and "s3:PutObject" in listed(stmt.get("Action")) and wanted & set(listed(stmt.get("Resource")))):
                return True
        return False

    FakeBucket._log_permissions_enabled_policy = staticmethod(_log_permissions_enabled_policy)


def shimmed(app: WsgiApp) -> WsgiApp:
    for shim in reversed(SHIMS):
        app = shim(app)
    return app


def _tls_files(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (IP SAN, as Go's TLS wants) and its key, written to ``directory``."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "moto.pem", directory / "moto-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class Server:
    """moto's application behind :data:`SHIMS` on a free 127.0.0.1 port, served from a thread, over HTTPS:
    the stacks' bucket policies deny every request without TLS (``aws:SecureTransport``), and moto evaluates
    them. Clients trust it through ``AWS_CA_BUNDLE`` (:meth:`client_env`)."""

    def __init__(self) -> None:
        import tempfile

        self._tls_dir = tempfile.TemporaryDirectory(prefix="moto-tls-")
        cert, key = _tls_files(Path(self._tls_dir.name))
        self.ca_bundle = str(cert)
        msk_cluster_arns()
        s3_logging_policy_check()
        emr_serverless_created()
        s3_policy_conditions()
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import WSGIRequestHandler, make_server

        class Quiet(WSGIRequestHandler):
            def log_request(self, *args: Any, **kwargs: Any) -> None:
                pass

            def log_error(self, *args: Any) -> None:
                pass

        self._server = make_server("127.0.0.1", 0, shimmed(DomainDispatcherApplication(create_backend_app)), threaded=True,
                                   request_handler=Quiet, ssl_context=(str(cert), str(key)))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.endpoint = f"https://127.0.0.1:{self._server.server_address[1]}"

    def client_env(self) -> dict[str, str]:
        """What an AWS client (boto3, the aws CLI, terraform's provider) needs to use this server."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_CA_BUNDLE": self.ca_bundle}

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join()
        self._tls_dir.cleanup()


def start() -> Server:
    return Server()


class PlainHttp:
    """moto's application behind ``wrap`` (a test's own shims) on a free 127.0.0.1 port over plain HTTP, served
    from a thread of this process (moto's state is per process: ``reset`` empties it first). A context manager
    whose value is the URL."""

    def __init__(self, wrap: Callable[[WsgiApp], WsgiApp] = lambda app: app, reset: bool = False) -> None:
        self.wrap, self.reset = wrap, reset

    def __enter__(self) -> str:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        #: the wrapped application (a shim class given as ``wrap`` is this instance)
        self.app = self.wrap(DomainDispatcherApplication(create_backend_app))
        self._server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        url = f"http://127.0.0.1:{self._server.server_address[1]}"
        if self.reset:
            import urllib.request

            urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=10).read()
        return url

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join()

    @staticmethod
    def client_env(url: str, region: str, account: str) -> dict[str, str]:
        """What boto3 and the CLI need to use it as ``account`` in ``region`` (moto reads MOTO_ACCOUNT_ID per request)."""
        return {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_DEFAULT_REGION": region, "AWS_REGION": region, "MOTO_ACCOUNT_ID": account, "AWS_EC2_METADATA_DISABLED": "true"}


def job_run_outputs(document: dict[str, Any], report: dict[str, Any], follow_result: dict[str, Any] | None) -> None:
    """moto limitation: EMR Serverless and Glue job runs run nothing. Write what the validation job would under
    its request's ``report_dir`` (moto's S3 backend of MOTO_ACCOUNT_ID): a batch run's ``report.json`` and
    ``report.html``, a follow run's ``follow.json`` (nothing when ``follow_result`` is None: a run that failed early)."""
    import os

    from moto.s3.models import s3_backends

    bucket, _, prefix = document["request"]["report_dir"].removeprefix("s3://").partition("/")
    backend = s3_backends[os.environ["MOTO_ACCOUNT_ID"]]["aws"]
    if "follow" in document:
        if follow_result is not None:
            backend.put_object(bucket, prefix.rstrip("/") + "/follow.json", json.dumps(follow_result).encode())
        return
    backend.put_object(bucket, prefix.rstrip("/") + "/report.json", json.dumps(report).encode())
    backend.put_object(bucket, prefix.rstrip("/") + "/report.html", b"<html>report</html>")


#: moto's default account (its backends are keyed by it when MOTO_ACCOUNT_ID is not set otherwise)
MOTO_DEFAULT_ACCOUNT = "123456789012"


def use_moto(monkeypatch: Any, url: str, region: str, account: str = MOTO_DEFAULT_ACCOUNT) -> None:
    """Point boto3 and the CLI of this test at moto's server ``url`` as ``account`` in ``region``
    (:meth:`PlainHttp.client_env`), with no profile of the machine's."""
    for k, v in PlainHttp.client_env(url, region, account).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@contextmanager
def served(monkeypatch: Any, wrap: Callable[[WsgiApp], WsgiApp], region: str, account: str) -> Iterator[Any]:
    """moto behind ``wrap`` (a test's shim class), emptied first, with this test's clients pointed at it; its value
    is the wrapped application (the shim instance)."""
    server = PlainHttp(wrap, reset=True)
    with server as url:
        use_moto(monkeypatch, url, region, account)
        yield server.app


@contextmanager
def ecs_tasks_stay() -> Iterator[str]:
    """moto's server on a free 127.0.0.1 port (its URL) whose ECS tasks stay in the state a test puts them in:
    moto walks a task RUNNING -> STOPPED on its own after a few DescribeTasks, where ECS stops a task when its
    container exits."""
    from moto.moto_api import state_manager
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    state_manager.set_transition(model_name="ecs::task", transition={"progression": "time", "seconds": 3600})
    try:
        yield f"http://{host}:{port}"
    finally:
        state_manager.unset_transition(model_name="ecs::task")
        server.stop()
