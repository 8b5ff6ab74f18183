"""docs/python.md runs as written: its shell steps with the command, then
every Python example, output compared, from a directory laid out as the
repository's root."""

import doctest
import os
import re
import shlex
import subprocess

from conftest import ROOT

DOC = ROOT / "docs" / "python.md"


def test_the_python_guide_runs_as_written(botscope_bin, tmp_path, monkeypatch):
    # The Scrapy section has a test of its own (test_scrapy_crawl.py).
    text = DOC.read_text(encoding="utf-8").split("\n## In Scrapy\n")[0]
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)

    # The shell steps: `pip install` is what this run did already; every
    # `botscope` line runs with the command the workspace built.
    shell = re.findall(r"```sh\n(.*?)```", text, re.S)
    commands = [line for block in shell for line in block.splitlines() if line.strip()]
    assert commands[0] == "pip install './python[pandas]'"
    # The walk-through's own directory, with the examples linked: what
    # this test made above.
    assert commands[1] == "mkdir walk && cd walk && ln -s ../examples examples"
    ran = 0
    for line in commands[2:]:
        args = shlex.split(line)
        assert args[0] == "botscope", line
        subprocess.run([botscope_bin, *args[1:]], check=True, capture_output=True)
        ran += 1
    assert ran == 2
    assert (tmp_path / "research.db.index").is_dir()

    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, "docs/python.md", str(DOC), 0)
    assert len(test.examples) > 30
    runner = doctest.DocTestRunner(
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    )
    out = []
    runner.run(test, out=out.append)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, "".join(out)
    assert attempted == len(test.examples)
    os.chdir(ROOT)
