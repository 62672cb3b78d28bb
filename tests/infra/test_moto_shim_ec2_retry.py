"""The deploy rehearsal's Ec2RetryReplay shim (tests/infra/moto_shims.py): a retry of an EC2 authorize call that moto
already answered gets that answer again; a new call always reaches moto."""

from __future__ import annotations

import io

from moto_shims import Ec2RetryReplay  # tests/infra is on sys.path (pytest prepends a test module's directory)

AUTH = "AWS4-HMAC-SHA256 Credential=KEY/20261127/eu-west-1/ec2/aws4_request, SignedHeaders=host, Signature=x"
BODY = b"Action=AuthorizeSecurityGroupIngress&GroupId=sg-1&IpPermissions.1.FromPort=9090"


def _environ(invocation: str) -> dict:
    return {"REQUEST_METHOD": "POST", "HTTP_AUTHORIZATION": AUTH, "HTTP_AMZ_SDK_INVOCATION_ID": invocation,
            "CONTENT_LENGTH": str(len(BODY)), "wsgi.input": io.BytesIO(BODY), "PATH_INFO": "/"}


def test_a_retry_of_an_answered_call_is_answered_again_without_reaching_moto() -> None:
    seen: list[bytes] = []

    def moto(environ, start_response):
        seen.append(environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"])))
        if len(seen) > 1 and environ["HTTP_AMZ_SDK_INVOCATION_ID"] == "op-1":
            start_response("400 Bad Request", [])
            return [b"InvalidPermission.Duplicate"]
        start_response("200 OK", [("Content-Type", "text/xml")])
        return [b"<AuthorizeSecurityGroupIngressResponse/>"]

    shim = Ec2RetryReplay(moto)
    answers = []
    for invocation in ("op-1", "op-1", "op-2"):
        status = {}
        body = b"".join(shim(_environ(invocation), lambda s, h, status=status: status.setdefault("s", s)))
        answers.append((status["s"], body))
    assert answers[0] == answers[1] == ("200 OK", b"<AuthorizeSecurityGroupIngressResponse/>")
    assert len(seen) == 2 and seen == [BODY, BODY]  # op-1 once, op-2 once: the retry never reached moto
