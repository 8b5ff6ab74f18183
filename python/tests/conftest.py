"""Shared fixtures: the repository's data, and the botscope command (to
make the stores and indexes the package reads, and to compare answers
with the command's)."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "crates" / "botscope-robotstxt" / "tests" / "data"
EXAMPLES = ROOT / "examples"


def jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def botscope_bin():
    """The command: $BOTSCOPE_BIN, else the workspace's debug build (made
    when missing)."""
    env = os.environ.get("BOTSCOPE_BIN")
    if env:
        return env
    exe = ROOT / "target" / "debug" / "botscope"
    if not exe.exists():
        subprocess.run(["cargo", "build", "-q", "-p", "botscope"], cwd=ROOT, check=True)
    return str(exe)


@pytest.fixture(scope="session")
def cli(botscope_bin, tmp_path_factory):
    """Runs the command with a private home (no user registry, no DNS
    cache, no IP-owner databases): (exit code, stdout, stderr)."""
    home = tmp_path_factory.mktemp("home")
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "LC_ALL": "C"}

    def run(*args, check=True):
        p = subprocess.run(
            [botscope_bin, *map(str, args)], capture_output=True, text=True, env=env
        )
        if check and p.returncode not in (0, 1):
            raise AssertionError(f"botscope {args}: exit {p.returncode}\n{p.stderr}")
        return p.returncode, p.stdout, p.stderr

    run.home = home
    return run


@pytest.fixture(autouse=True)
def private_home(monkeypatch, cli):
    """The package reads the same private home as the command."""
    monkeypatch.setenv("HOME", str(cli.home))
    for k in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(k, raising=False)


@pytest.fixture(scope="session")
def research(cli, tmp_path_factory):
    """examples/robots imported into a store (dated 2007-03-01) and
    indexed: (store, index)."""
    d = tmp_path_factory.mktemp("research")
    db, ix = d / "s.db", d / "s.db.index"
    cli("store", "import", "--db", db, "--format", "files", "--date", "2007-03-01",
        EXAMPLES / "robots")
    cli("index", "build", "--db", db, "--index", ix)
    return db, ix


def which(name):
    return shutil.which(name)


def pg_bin():
    """The newest installed PostgreSQL's programs, if any."""
    found = []
    base = Path("/usr/lib/postgresql")
    if base.is_dir():
        for d in base.iterdir():
            if d.name.isdigit() and (d / "bin" / "initdb").is_file():
                found.append((int(d.name), d / "bin"))
    return max(found)[1] if found else None


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL on 127.0.0.1 (a cluster made by initdb, run as
    nobody when the tests run as root), stopped by its PID: a function
    that creates a database and returns its URL."""
    import socket
    import time

    bin_dir = pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL (scripts/test installs Debian's postgresql)")
    import tempfile

    # Directly under /tmp: the server's user must reach it (pytest's own
    # temporary directories are private to the user running the tests).
    d = Path(tempfile.mkdtemp(prefix="botscope-pg-"))
    prefix = []
    if os.geteuid() == 0:
        import pwd

        nobody = pwd.getpwnam("nobody")
        os.chown(d, nobody.pw_uid, nobody.pw_gid)
        prefix = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                  "--clear-groups", "--"]
    data = d / "data"
    subprocess.run(prefix + [str(bin_dir / "initdb"), "-D", str(data), "-U", "botscope", "-A",
                             "trust", "-E", "UTF8", "--locale=C", "--no-sync"],
                   check=True, capture_output=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        prefix + [str(bin_dir / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(port),
                  "-k", str(d), "-c", "fsync=off", "-c", "log_min_messages=fatal"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    started = time.monotonic()
    while subprocess.run([str(bin_dir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)]).returncode != 0:
        assert server.poll() is None, "postgres exited"
        assert time.monotonic() - started < 60, "postgres did not start"
        time.sleep(0.05)

    def create(name):
        subprocess.run([str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U",
                        "botscope", name], check=True, capture_output=True)
        return f"postgres://botscope@127.0.0.1:{port}/{name}"

    yield create
    server.terminate()
    server.wait()
    shutil.rmtree(d, ignore_errors=True)
