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
* ``plan(...)``, ``catalog()`` (clusters, GPUs, models, algorithms) and
  ``sweep(scenarios)`` (many ``Scenario`` objects, one frame).

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
import hashlib
import json
import math
import re
import sys
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
    """A DataFrame that prints whole (every column, no "..."), as the CLI's tables do."""

    @property
    def _constructor(self):
        return Results

    def __repr__(self) -> str:
        return self.to_string()


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


def whatif(model: str = "dlrm-a", nodes: int | Iterable[int] | None = None, cluster: str = "zionex", *,
           threads: int = 0, progress: bool | Callable[[str], None] | None = None, args: Sequence[str] = (),
           **knobs: Any) -> pd.DataFrame:
    """``zionsim whatif``: one training iteration per (knob values, cluster size).

    nodes: servers, one size or several (default: the CLI's 1, 2, 4, 8, 16).
    threads: sizes simulated at once (0: one per core).
    """
    argv = ["whatif", "--model", model, "--cluster", cluster, "--format", "json", "--threads", threads]
    if nodes is not None:
        argv += ["--nodes", _nodes_text(nodes)]
    argv += list(args) + _vary_args(knobs)
    return whatif_frame(json.loads(command(argv, progress)))


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


@dataclasses.dataclass
class Scenario:
    """One what-if question: a command ("whatif" or "collective") and its arguments.

    Build one, change it (``dataclasses.replace`` or attribute assignment),
    save it (``to_json``/``from_json``, a stable ``key()`` per content), and
    run many with ``sweep``.
    """

    command: str = "whatif"
    arguments: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"command": self.command, "arguments": self.arguments}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Scenario":
        data = json.loads(text)
        if not isinstance(data, dict) or set(data) != {"command", "arguments"}:
            raise ValueError('a scenario is {"command": ..., "arguments": {...}}')
        return cls(str(data["command"]), dict(data["arguments"]))

    def key(self) -> str:
        """A hash of the content: equal scenarios, equal keys, across runs."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def run(self, **overrides: Any) -> pd.DataFrame:
        functions = {"whatif": whatif, "collective": collective}
        if self.command not in functions:
            raise ValueError(f"scenario command {self.command!r}: expected one of {sorted(functions)}")
        return functions[self.command](**{**self.arguments, **overrides})


def sweep(scenarios: Iterable[Scenario], threads: int = 0,
          progress: bool | Callable[[str], None] | None = None) -> pd.DataFrame:
    """Runs each scenario and stacks their frames, a "scenario" column (its key) first."""
    frames = []
    for s in scenarios:
        frame = s.run(threads=threads, progress=progress)
        frame.insert(0, "scenario", s.key())
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
