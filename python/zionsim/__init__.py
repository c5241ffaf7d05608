"""zionsim from Python: what-if simulations of ZionEX as pandas DataFrames.

    >>> import zionsim
    >>> zionsim.whatif(model="dlrm-a", nodes=[8, 16])                     # doctest: +SKIP
    >>> zionsim.whatif(model="dlrm-a", nodes=[8, 16], nic_gbit=[200, 400])  # doctest: +SKIP

Each function runs the zionsim command of its name in this process (the
extension ``zionsim._zionsim`` calls the command line's own entry point, so
a result here is the CLI's, to the bit) and returns its rows as a DataFrame:

* ``whatif(model, nodes, cluster, **knobs)``: one row per (knob values, size),
  the columns of ``zionsim whatif --format csv`` at the full precision of its
  ``--format json``;
* ``collective(op, nodes, algorithms, ..., **knobs)``: one row per (size,
  algorithm, knob values), the JSON's ``results``;
* ``run(trace, ...)``: the replayed trace's summary, one row;
* ``plan(...)``, ``catalog()`` or ``list()`` (clusters, GPUs, models,
  algorithms);
* ``Scenario``: one what-if question as the simulator holds it (build,
  change, save, hash, run) and ``sweep(scenarios)`` (many, one frame).

A frame a command returned prints as the CLI's table.

Knobs are the CLI's ``--vary`` keys: ``nic_gbit=400`` (underscores stand for
the dashes of ``nic-gbit``), a list sweeps them (every combination runs at
every size, as ``--vary``), and keys with a dot go through ``**{...}``:
``**{"algo.all_to_all": ["direct", "nccl_p2p"]}``, ``**{"fabric.oversubscription": 2}``.
Booleans stand for on/off. ``args=[...]`` passes any other flag as the CLI
spells it.

Errors are exceptions: ``InputError`` (bad input; ``.file``, ``.pointer``,
``.message`` of the first problem, ``.problems`` for all), ``SimulationError``
(an internal error), ``KeyboardInterrupt`` (Ctrl-C stops a run at its next
slice of simulated time and returns here). While a simulation runs the GIL is
released. ``progress=True`` shows a tqdm bar over the points when tqdm is
installed (Debian's python3-tqdm) and else prints the commands' progress
lines to stderr; a callable receives the lines.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import sys
import tempfile
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from . import _zionsim

__all__ = [
    "InputError",
    "Problem",
    "Results",
    "Scenario",
    "SimulationError",
    "catalog",
    "collective",
    "command",
    "plan",
    "run",
    "sweep",
    "whatif",
]

__version__ = "0.1.0"


@dataclasses.dataclass(frozen=True)
class Problem:
    """One problem of a bad input: where (file, JSON pointer or line) and what."""

    file: str
    pointer: str
    message: str


class InputError(ValueError):
    """Bad input (the CLI's exit status 2): a file, flag or knob zionsim refuses."""

    def __init__(self, problems: Sequence[Problem], text: str):
        super().__init__(text)
        self.problems = list(problems)
        first = self.problems[0] if self.problems else None
        self.file = first.file if first else None
        self.pointer = first.pointer if first else None
        self.message = first.message if first else text


class SimulationError(RuntimeError):
    """An internal error of the simulator (the CLI's exit status 1): a bug."""


_DONE = re.compile(r" done \((\d+) of (\d+)[,)]")


class _TqdmProgress:
    """progress=True with tqdm installed: a bar over the sweep's points.

    The commands say "... done (K of N, ...)" as each point ends; the bar
    follows K of N, and every other line (a hint, a long point's "running")
    is written above it. Closed when the call returns.
    """

    def __init__(self, tqdm_class):
        self._tqdm_class = tqdm_class
        self._bar = None

    def __call__(self, line: str) -> None:
        found = _DONE.search(line)
        if not found:
            (self._bar.write if self._bar is not None else self._tqdm_class.write)(line, file=sys.stderr)
            return
        done, total = int(found.group(1)), int(found.group(2))
        if self._bar is None:
            self._bar = self._tqdm_class(total=total, unit="point", file=sys.stderr)
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _progress_callback(progress: bool | Callable[[str], None] | None):
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            from tqdm import tqdm  # optional: Debian's python3-tqdm
        except ImportError:
            return lambda line: print(line, file=sys.stderr, flush=True)
        return _TqdmProgress(tqdm)
    if callable(progress):
        return progress
    raise TypeError(f"progress: expected None, a bool or a callable, got {type(progress).__name__}")


def command(args: Sequence[Any], progress: bool | Callable[[str], None] | None = None) -> str:
    """Runs ``zionsim ARGS...`` in process and returns what it prints.

    Raises InputError, SimulationError or KeyboardInterrupt as the module
    docstring says.
    """
    callback = _progress_callback(progress)
    try:
        status, out, err, diagnostics = _zionsim.run([str(a) for a in args], callback)
    finally:
        if isinstance(callback, _TqdmProgress):
            callback.close()
    if status == _zionsim.EXIT_OK:
        return out
    text = err.strip()
    if status == _zionsim.EXIT_INTERRUPTED:
        raise KeyboardInterrupt(text)
    if status == _zionsim.EXIT_BAD_INPUT:
        problems = [Problem(*d) for d in diagnostics]
        if not problems:  # a bad flag: the CLI's own message
            first = text.splitlines()[0] if text else "bad input"
            problems = [Problem("<command line>", "", first.removeprefix("zionsim: error: "))]
        raise InputError(problems, text)
    raise SimulationError(text)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"knob value {value!r} is not finite")
        return repr(value)
    return str(value)


def _vary_args(knobs: Mapping[str, Any]) -> list[str]:
    args: list[str] = []
    for key, value in knobs.items():
        name = key if "." in key else key.replace("_", "-")
        values = list(value) if isinstance(value, (list, tuple, range)) else [value]
        if not values:
            raise ValueError(f"knob {key}: no values")
        args += ["--vary", f"{name}={','.join(_text(v) for v in values)}"]
    return args


def _nodes_text(nodes: int | Iterable[int]) -> str:
    if isinstance(nodes, int):
        return str(nodes)
    return ",".join(str(int(n)) for n in nodes)


_BREAKDOWN = [
    "compute",
    "exposed_all_to_all",
    "exposed_all_reduce",
    "other",
    "overlapped_communication",
    "compute_slowed_by_communication",
]


class Results(pd.DataFrame):
    """A DataFrame that prints as the CLI does.

    A frame a command returned prints the command's own table (``whatif``'s,
    to the character) when it has one, and else whole (every column, no
    "..."). A frame derived from it (a slice, a filter, a new column) no
    longer is the command's result and prints as a DataFrame, whole.
    ``frame.to_string()`` always gives the DataFrame's text.
    """

    _TABLE = "cli_table"

    @property
    def _constructor(self):
        return Results

    def __finalize__(self, other, method=None, **kwargs):
        result = super().__finalize__(other, method=method, **kwargs)
        if result is not other:
            result.attrs.pop(Results._TABLE, None)
        return result

    def __repr__(self) -> str:
        table = self.attrs.get(Results._TABLE)
        return table.rstrip("\n") if table else self.to_string()


def whatif_frame(document: Mapping[str, Any]) -> pd.DataFrame:
    """The rows of ``whatif --format json`` with ``--format csv``'s columns.

    The knobs varied come first (their values as the JSON has them), then
    nodes ... bottleneck; a size that does not fit has NaN times and its
    reason as the bottleneck. The whole document is in ``frame.attrs["json"]``.
    """
    varied = list(document.get("vary", {}).keys())
    rows = []
    for r in document["results"]:
        row = {key: r["variant"][key] for key in varied}
        row.update(nodes=r["nodes"], gpus=r["gpus"], global_batch=r["global_batch"], fits=r["fits"])
        fits = r["fits"]
        row["iteration_time_ms"] = r["iteration_time_ms"] if fits else math.nan
        row["samples_per_s"] = r["samples_per_s"] if fits else math.nan
        row["scaling_efficiency"] = r["scaling_efficiency"] if fits else math.nan
        if varied:
            value = r.get("throughput_vs_first_variant") if fits else None
            row["throughput_vs_first_variant"] = math.nan if value is None else value
        for part in _BREAKDOWN:
            row[f"{part}_ms"] = r["breakdown_ms"][part] if fits else math.nan
        row["bottleneck"] = r["bottleneck"] if fits else r.get("reason", "")
        rows.append(row)
    frame = Results(rows)
    frame.attrs["json"] = document
    return frame


def _whatif_run(argv: list[Any], progress: bool | Callable[[str], None] | None,
                files: Mapping[str, str] = {}) -> pd.DataFrame:
    """Runs ``whatif ARGV`` once for its table (stdout) and its JSON (--json)."""
    with tempfile.TemporaryDirectory(prefix="zionsim-") as tmp:
        for name, text in files.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(text)
        argv = [os.path.join(tmp, a[len("@tmp/"):]) if isinstance(a, str) and a.startswith("@tmp/") else a
                for a in argv]
        document_path = os.path.join(tmp, "whatif.json")
        table = command(argv + ["--format", "table", "--json", document_path], progress)
        with open(document_path, encoding="utf-8") as f:
            document = json.load(f)
    frame = whatif_frame(document)
    frame.attrs[Results._TABLE] = table
    return frame


def whatif(model: str = "dlrm-a", nodes: int | Iterable[int] | None = None, cluster: str = "zionex", *,
           threads: int = 0, progress: bool | Callable[[str], None] | None = None, args: Sequence[str] = (),
           **knobs: Any) -> pd.DataFrame:
    """``zionsim whatif``: one training iteration per (knob values, cluster size).

    nodes: servers, one size or several (default: the CLI's 1, 2, 4, 8, 16).
    threads: sizes simulated at once (0: one per core).
    The frame prints as the CLI's table; ``frame.attrs["json"]`` is the
    CLI's JSON document.
    """
    argv = ["whatif", "--model", model, "--cluster", cluster, "--threads", threads]
    if nodes is not None:
        argv += ["--nodes", _nodes_text(nodes)]
    argv += list(args) + _vary_args(knobs)
    return _whatif_run(argv, progress)


def _results_frame(document: Mapping[str, Any], key: str = "results") -> pd.DataFrame:
    frame = Results(pd.json_normalize(document[key], sep=".") if document[key] else None)
    frame.attrs["json"] = document
    return frame


def collective(op: str = "all_reduce", nodes: int = 1, algorithms: str | Sequence[str] | None = None,
               cluster: str = "zionex", *, min_bytes: int | str = 8, max_bytes: int | str = "128M",
               step_factor: float = 2.0, dtype: str = "fp32", threads: int = 0,
               progress: bool | Callable[[str], None] | None = None, args: Sequence[str] = (),
               **knobs: Any) -> pd.DataFrame:
    """``zionsim collective``: one row per (size, algorithm, knob values)."""
    argv = ["collective", "--op", op, "--nodes", nodes, "--cluster", cluster, "-b", min_bytes, "-e", max_bytes,
            "-f", repr(float(step_factor)), "--dtype", dtype, "--format", "json", "--threads", threads]
    if algorithms is not None:
        for a in [algorithms] if isinstance(algorithms, str) else algorithms:
            argv += ["--algo", a]
    argv += list(args) + _vary_args(knobs)
    return _results_frame(json.loads(command(argv, progress)))


def run(trace: str | Sequence[str], nodes: int | None = None, cluster: str = "zionex", *,
        progress: bool | Callable[[str], None] | None = None, args: Sequence[str] = ()) -> pd.DataFrame:
    """``zionsim run``: replays a trace (zionsim, Chakra or Kineto); its summary as one row."""
    traces = [trace] if isinstance(trace, str) else list(trace)
    argv = ["run", "--cluster", cluster, "--format", "json", "--trace", *traces]
    if nodes is not None:
        argv += ["--nodes", nodes]
    document = json.loads(command(argv + list(args), progress))
    frame = Results(pd.json_normalize(document, sep="."))
    frame.attrs["json"] = document
    return frame


def plan(model: str = "dlrm-a", nodes: int = 8, cluster: str = "zionex", *,
         progress: bool | Callable[[str], None] | None = None, args: Sequence[str] = ()) -> dict[str, Any]:
    """``zionsim plan``: the sharding plan of a model at one size, as the CLI's JSON."""
    argv = ["plan", "--model", model, "--nodes", nodes, "--cluster", cluster, "--format", "json"]
    return json.loads(command(argv + list(args), progress))


def catalog(what: str | None = None) -> dict[str, pd.DataFrame]:
    """What zionsim knows by name: {"clusters": frame, "gpus": ..., "models": ..., ...}."""
    document = json.loads(command(["list", "--format", "json"] + ([what] if what else [])))
    return {key: pd.DataFrame(value) for key, value in document.items() if isinstance(value, list)}


def __getattr__(name: str) -> Any:
    # zionsim.list(), catalog's other name, without shadowing the builtin
    # list inside this module (a module's __getattr__ serves only lookups
    # from outside: PEP 562).
    if name == "list":
        return catalog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Scenario:
    """One what-if question, as the simulator holds it (``experiments/scenario.h``).

    Every setting of a ``whatif`` run: the cluster and its sizes, the model,
    the sharding, the algorithms, the fidelity and every knob. Built and
    checked by the simulator's own code, so a bad value raises InputError
    naming its JSON pointer, and ``key()`` is the hash the CLI gives the same
    scenario (``whatif --emit-scenarios``)::

        s = zionsim.Scenario(model="dlrm-a", nodes=[8, 16], nic_gbit=400)
        s2 = s.set(oversubscription=2)           # a new scenario; s is unchanged
        s2.run()                                 # whatif --scenario-file: a frame
        s2.run(nic_gbit=[200, 400])              # varied on top, as --vary
        zionsim.Scenario.from_json(s2.to_json()) == s2

    Knobs are ``whatif``'s ``--vary`` keys, as in ``whatif()`` (underscores
    for dashes, dotted keys through ``**{...}``), with one value each;
    ``nodes`` are the sizes. ``s["model"]`` reads a field of the JSON form;
    ``s.to_dict()`` gives all of them.
    """

    __slots__ = ("_text", "_key")

    def __init__(self, model: str | None = None, nodes: int | Iterable[int] | None = None,
                 cluster: str | None = None, **knobs: Any):
        self._text, self._key = _checked(_zionsim.scenario_check(_zionsim.scenario_default(), "<scenario>"))
        settings: dict[str, Any] = {}
        if cluster is not None:
            settings["cluster"] = cluster
        if model is not None:
            settings["model"] = model
        settings.update(knobs)
        self._become(self.set(nodes=nodes, **settings))

    def _become(self, other: "Scenario") -> None:
        self._text, self._key = other._text, other._key

    @classmethod
    def _of(cls, text: str, key: str) -> "Scenario":
        s = cls.__new__(cls)
        s._text, s._key = text, key
        return s

    def set(self, nodes: int | Iterable[int] | None = None, **knobs: Any) -> "Scenario":
        """A copy with the given sizes and knobs (``--vary`` keys, one value each)."""
        text, key = self._text, self._key
        if nodes is not None:
            data = json.loads(text)
            data["nodes"] = [int(nodes)] if isinstance(nodes, int) else [int(n) for n in nodes]
            text, key = _checked(_zionsim.scenario_check(json.dumps(data), "<scenario>"))
        for name, value in knobs.items():
            if isinstance(value, (list, tuple, range, set)):
                raise TypeError(f"Scenario knob {name}: one value, got {value!r} (vary it with run({name}=[...]))")
            knob = name if "." in name else name.replace("_", "-")
            text, key = _checked(_zionsim.scenario_set(text, knob, _text(value)))
        return Scenario._of(text, key)

    def to_json(self, indent: int | None = None) -> str:
        """The JSON form ``whatif --scenario-file`` reads (every field, defaults included)."""
        return self._text if indent is None else json.dumps(json.loads(self._text), indent=indent)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self._text)

    @classmethod
    def from_json(cls, text: str | Mapping[str, Any], source: str = "<scenario>") -> "Scenario":
        """Reads the JSON form (text or a dict); a key left out keeps its default."""
        if not isinstance(text, str):
            text = json.dumps(text)
        return cls._of(*_checked(_zionsim.scenario_check(text, source)))

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json(indent=2) + "\n")

    @classmethod
    def load(cls, path: str) -> "Scenario":
        with open(path, encoding="utf-8") as f:
            return cls.from_json(f.read(), path)

    def key(self) -> str:
        """The scenario's hash (16 hex digits), the CLI's for the same scenario."""
        return self._key

    def __getitem__(self, field: str) -> Any:
        return self.to_dict()[field]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self._text == other._text

    def __hash__(self) -> int:
        return hash(self._text)

    def __repr__(self) -> str:
        default = json.loads(_zionsim.scenario_default())
        changed = {k: v for k, v in self.to_dict().items() if default.get(k) != v}
        return f"Scenario({self._key}: {json.dumps(changed)})"

    def run(self, nodes: int | Iterable[int] | None = None, *, threads: int = 0,
            progress: bool | Callable[[str], None] | None = None, args: Sequence[str] = (),
            **vary: Any) -> pd.DataFrame:
        """``whatif --scenario-file``: a frame as ``whatif()`` returns.

        nodes replaces the scenario's sizes; knobs given here are varied on
        top of it (``--vary``; a list sweeps them).
        """
        argv: list[Any] = ["whatif", "--scenario-file", "@tmp/scenario.json", "--threads", threads]
        if nodes is not None:
            argv += ["--nodes", _nodes_text(nodes)]
        argv += list(args) + _vary_args(vary)
        return _whatif_run(argv, progress, {"scenario.json": self._text})


def _checked(result: tuple[str, str, list[tuple[str, str, str]]]) -> tuple[str, str]:
    text, key, problems = result
    if problems:
        found = [Problem(*p) for p in problems]
        raise InputError(found, "\n".join(": ".join(x for x in (p.file, p.pointer, p.message) if x) for p in found))
    return text, key


def sweep(scenarios: Iterable[Scenario], threads: int = 0,
          progress: bool | Callable[[str], None] | None = None) -> pd.DataFrame:
    """Runs each scenario and stacks their frames, a "scenario" column (its key) first.

    threads: each scenario's sizes simulated at once (0: one per core).
    """
    frames = []
    for s in scenarios:
        if not isinstance(s, Scenario):
            raise TypeError(f"sweep: expected Scenario objects, got {type(s).__name__}")
        frame = s.run(threads=threads, progress=progress)
        frame.insert(0, "scenario", s.key())
        frames.append(frame)
    return Results(pd.concat(frames, ignore_index=True)) if frames else Results()
