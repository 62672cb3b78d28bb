"""images/grafana/people.sh (one Grafana login per person) and its start from the Grafana entrypoint, run
with bash on this machine.

There is no Grafana here (the stand-in base has no binary; Grafana is not built here), so these tests cover
what the script does before and without Grafana: nothing at all without people, bad input refused before any
request, a bounded wait with one line when Grafana never answers, the passwords kept out of every output and
out of Grafana's environment. The calls to Grafana's HTTP API themselves are not exercised here.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PEOPLE = REPO / "images" / "grafana" / "people.sh"
GUARD = REPO / "images" / "grafana" / "require-admin-password.sh"

ADMIN_PASSWORD = "adminPw4breakGlass"
ALICE_PASSWORD = "alicePw7fromHerOwnSecret"
JSMITH_PASSWORD = "jsmithPw2fromHisOwnSecret"


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP port on 127.0.0.1 that accepts connections and never answers: whether anything connected shows
    whether the script sent a request (no HTTP is spoken on it)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock
    sock.close()


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 bound by this test but not listening: every connection to it is refused (nothing
    listens there, and no other process can take it while the test runs)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


def connected(sock: socket.socket) -> bool:
    sock.settimeout(0.2)
    try:
        conn, _ = sock.accept()
    except TimeoutError:
        return False
    conn.close()
    return True


def run_people(env: dict[str, str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(PEOPLE)], capture_output=True, text=True, timeout=timeout,
                          env={"PATH": os.environ["PATH"], **env})


def no_password_in(proc: subprocess.CompletedProcess[str]) -> None:
    for secret in (ADMIN_PASSWORD, ALICE_PASSWORD, JSMITH_PASSWORD):
        assert secret not in proc.stdout and secret not in proc.stderr, "a password was printed"


def test_without_people_the_script_exits_0_at_once_and_sends_no_request(listener):
    started = time.monotonic()
    proc = run_people({"GF_SECURITY_ADMIN_PASSWORD": ADMIN_PASSWORD, "GF_SERVER_HTTP_PORT": str(listener.getsockname()[1])})
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    assert time.monotonic() - started < 5
    assert not connected(listener), "the script connected to Grafana's port without any person to make"


def test_when_grafana_never_answers_it_gives_up_after_the_bound_with_one_line_and_no_password(closed_port):
    env = {
        "GF_SECURITY_ADMIN_PASSWORD": ADMIN_PASSWORD,
        "MM2_GRAFANA_PERSON_ALICE_PASSWORD": ALICE_PASSWORD,
        "MM2_GRAFANA_PERSON_J_SMITH_PASSWORD": JSMITH_PASSWORD,
        "GF_SERVER_HTTP_PORT": str(closed_port),
        "MM2_GRAFANA_PEOPLE_WAIT_SECONDS": "2",
    }
    started = time.monotonic()
    proc = run_people(env)
    elapsed = time.monotonic() - started
    assert proc.returncode == 1, proc.stderr
    assert 2 <= elapsed < 10, elapsed
    (line,) = proc.stderr.splitlines()
    assert line == (f"grafana people: Grafana did not answer http://127.0.0.1:{closed_port}/api/health within 2s; "
                    "no person's login was made (2 waiting)")
    assert proc.stdout == ""
    no_password_in(proc)


def test_a_bad_person_variable_is_one_line_naming_it_before_any_request(listener):
    env = {
        "GF_SECURITY_ADMIN_PASSWORD": ADMIN_PASSWORD,
        # a double quote would break the JSON body: refused, named, never printed
        "MM2_GRAFANA_PERSON_ALICE_PASSWORD": ALICE_PASSWORD + '"',
        "GF_SERVER_HTTP_PORT": str(listener.getsockname()[1]),
    }
    proc = run_people(env)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("grafana people: MM2_GRAFANA_PERSON_ALICE_PASSWORD must be a non-empty password") and "alice skipped" in line
    no_password_in(proc)
    assert not connected(listener), "bad input must be refused before any request"


def test_the_admin_login_is_not_a_person(listener):
    env = {"GF_SECURITY_ADMIN_PASSWORD": ADMIN_PASSWORD, "MM2_GRAFANA_PERSON_ADMIN_PASSWORD": ALICE_PASSWORD,
           "GF_SERVER_HTTP_PORT": str(listener.getsockname()[1])}
    proc = run_people(env)
    assert proc.returncode == 2 and "names the admin login admin" in proc.stderr
    no_password_in(proc)
    assert not connected(listener)


def test_without_the_admin_password_no_login_is_made(listener):
    proc = run_people({"MM2_GRAFANA_PERSON_ALICE_PASSWORD": ALICE_PASSWORD, "GF_SERVER_HTTP_PORT": str(listener.getsockname()[1])})
    assert proc.returncode == 2 and proc.stderr.strip() == "grafana people: GF_SECURITY_ADMIN_PASSWORD is not set; no person's login was made"
    assert not connected(listener)


def test_the_entrypoint_starts_the_script_and_hands_over_without_the_people_passwords(closed_port):
    """The entrypoint hands over to `env` (standing in for /run.sh): Grafana's environment keeps the admin
    password and loses every person's; the script, started in the background, still had them and gives up
    (nothing listens) with its one line, while the handed-over command ran regardless."""
    env = {
        "PATH": os.environ["PATH"],
        "GF_SECURITY_ADMIN_PASSWORD": ADMIN_PASSWORD,
        "MM2_GRAFANA_PERSON_ALICE_PASSWORD": ALICE_PASSWORD,
        "MM2_GRAFANA_PERSON_J_SMITH_PASSWORD": JSMITH_PASSWORD,
        "MM2_GRAFANA_PEOPLE_SCRIPT": str(PEOPLE),
        "GF_SERVER_HTTP_PORT": str(closed_port),
        "MM2_GRAFANA_PEOPLE_WAIT_SECONDS": "1",
    }
    # stderr stays open until the background script ends: run() returns after its line.
    proc = subprocess.run(["sh", str(GUARD), "env"], capture_output=True, text=True, timeout=30, env=env)
    assert proc.returncode == 0, proc.stderr
    handed_over = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    assert handed_over["GF_SECURITY_ADMIN_PASSWORD"] == ADMIN_PASSWORD
    assert not [k for k in handed_over if k.startswith("MM2_GRAFANA_PERSON_")], handed_over
    assert proc.stderr.splitlines() == [
        f"grafana people: Grafana did not answer http://127.0.0.1:{closed_port}/api/health within 1s; "
        "no person's login was made (2 waiting)"]
    assert ALICE_PASSWORD not in proc.stdout + proc.stderr and JSMITH_PASSWORD not in proc.stdout + proc.stderr


def test_the_image_installs_the_script_where_the_entrypoint_starts_it():
    dockerfile = (REPO / "images" / "grafana" / "Dockerfile").read_text()
    assert "COPY --chmod=0755 images/grafana/people.sh /usr/local/bin/grafana-people.sh" in dockerfile
    assert "PEOPLE_SCRIPT=${MM2_GRAFANA_PEOPLE_SCRIPT:-/usr/local/bin/grafana-people.sh}" in GUARD.read_text()


def curl_command_lines(port: int) -> list[str]:
    """The command lines of the running curl processes that name ``port`` (what `ps` shows of them)."""
    found = []
    for proc_dir in Path("/proc").iterdir():
        try:
            argv = (proc_dir / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        line = " ".join(a.decode(errors="replace") for a in argv if a)
        if argv and argv[0].endswith(b"curl") and f":{port}/" in line:
            found.append(line)
    return found


def test_api_sends_the_admin_login_and_the_body_through_curls_stdin_never_on_its_command_line(listener):
    """`api` (sourced from the script) against a socket that records one request and answers it with a fixed
    reply; no Grafana behaviour is imitated: what is checked is what curl sends and what `ps` shows of it."""
    import base64
    import json

    admin = 'adm"in\\Pw'  # a quote and a backslash: the curl config quoting must carry them intact
    port = listener.getsockname()[1]
    body = json.dumps({"name": "alice", "login": "alice", "password": ALICE_PASSWORD}, separators=(",", ":"))
    script = (f'source {PEOPLE}; admin_user=admin; admin_password="$ADMIN"; base=http://127.0.0.1:{port}; tls=(); '
              f'api POST /api/admin/users "$BODY_JSON"; printf "%s\\n%s" "$STATUS" "$BODY"')
    proc = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"PATH": os.environ["PATH"], "ADMIN": admin, "BODY_JSON": body})
    try:
        listener.settimeout(20)
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(10)
            raw = b""
            while b"\r\n\r\n" not in raw:
                raw += conn.recv(65536)
            head, _, payload = raw.partition(b"\r\n\r\n")
            headers = {k.strip().lower(): v.strip() for k, v in
                       (line.split(":", 1) for line in head.decode().split("\r\n")[1:])}
            while len(payload) < int(headers["content-length"]):
                payload += conn.recv(65536)
            # curl is waiting for the reply now: its command line is what `ps` shows
            shown = curl_command_lines(port)
            reply = b'{"id":7,"message":"User created"}'
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(reply), reply))
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert head.decode().split("\r\n")[0] == "POST /api/admin/users HTTP/1.1"
    assert headers["authorization"] == "Basic " + base64.b64encode(f"admin:{admin}".encode()).decode()
    assert headers["content-type"] == "application/json"
    assert json.loads(payload) == {"name": "alice", "login": "alice", "password": ALICE_PASSWORD}
    assert shown, "no curl process was seen while the request was open"
    # (curl blanks a -u password in its own argv once it runs, so the body, which it never blanks, is what
    # tells a config on stdin from arguments; both are checked.)
    assert not [line for line in shown if ALICE_PASSWORD in line or admin in line or "Pw" in line], shown
    assert out.splitlines() == ["200", '{"id":7,"message":"User created"}'] and err == ""
