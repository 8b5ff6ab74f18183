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
