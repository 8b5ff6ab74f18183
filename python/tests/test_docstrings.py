"""The examples in the docstrings (the extension's and the package's) run
and print what they say."""

import doctest
import inspect

import botscope
from botscope import _botscope


def docstrings():
    seen = [("botscope", botscope.__doc__)]
    for name in sorted(dir(_botscope)):
        obj = getattr(_botscope, name)
        if name.startswith("__") or not (inspect.isclass(obj) or callable(obj)):
            continue
        seen.append((name, obj.__doc__))
        if inspect.isclass(obj):
            for m, member in vars(obj).items():
                if not m.startswith("_"):
                    seen.append((f"{name}.{m}", getattr(member, "__doc__", None)))
    for name in ("Rows", "Store", "Index"):
        cls = getattr(botscope, name)
        seen.append((name, cls.__doc__))
        for m, member in vars(cls).items():
            if not m.startswith("_"):
                seen.append((f"{name}.{m}", getattr(member, "__doc__", None)))
    return [(n, d) for n, d in seen if d]


def test_docstring_examples_run():
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    examples = 0
    out = []
    for name, doc in docstrings():
        globs = {"botscope": botscope, **{k: getattr(botscope, k) for k in botscope.__all__}}
        test = parser.get_doctest(doc, globs, name, None, 0)
        examples += len(test.examples)
        runner.run(test, out=out.append)
    failed, _ = runner.summarize(verbose=False)
    assert failed == 0, "".join(out)
    assert examples >= 8, examples


def test_every_public_name_is_documented():
    missing = [n for n in botscope.__all__ if not (getattr(botscope, n).__doc__ or "").strip()]
    assert not missing, missing
    for cls in (botscope.Robots, botscope.Registry, botscope.Favorability):
        for m, member in vars(cls).items():
            if not m.startswith("_") and callable(member):
                assert (member.__doc__ or "").strip(), f"{cls.__name__}.{m}"
