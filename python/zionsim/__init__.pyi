# Type stubs for editors: the knobs are the CLI's --vary keys (zionsim whatif --help).
import builtins
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

__version__: str

_Progress = bool | Callable[[str], None] | None
_Value = str | int | float | bool
_Values = _Value | Sequence[_Value]

class Problem:
    file: str
    pointer: str
    message: str
    def __init__(self, file: str, pointer: str, message: str) -> None: ...

class InputError(ValueError):
    problems: builtins.list[Problem]
    file: str | None
    pointer: str | None
    message: str

class SimulationError(RuntimeError): ...

def command(args: Sequence[Any], progress: _Progress = ...) -> str: ...
def whatif_frame(document: Mapping[str, Any]) -> pd.DataFrame: ...
def whatif(model: str = ..., nodes: int | Iterable[int] | None = ..., cluster: str = ..., *, threads: int = ...,
           progress: _Progress = ..., args: Sequence[str] = ...,
           nic_gbit: _Values = ..., oversubscription: _Values = ..., gpu: _Values = ..., profile: _Values = ...,
           sharding: _Values = ..., batch_per_gpu: _Values = ..., global_batch: _Values = ...,
           a2a_precision: _Values = ..., a2a_backward_precision: _Values = ..., all_reduce_precision: _Values = ...,
           fidelity: _Values = ..., completion_quantum_ns: _Values = ..., embeddings: _Values = ...,
           pipeline: _Values = ..., prefetch_cache: _Values = ..., cache_hit_rate: _Values = ...,
           index_zipf_alpha: _Values = ..., cache_fraction: _Values = ..., hbm_reserve: _Values = ...,
           dense_optimizer: _Values = ..., index_dtype: _Values = ..., degrade: _Values = ...,
           **knobs: _Values) -> pd.DataFrame: ...
def collective(op: str = ..., nodes: int = ..., algorithms: str | Sequence[str] | None = ..., cluster: str = ..., *,
               min_bytes: int | str = ..., max_bytes: int | str = ..., step_factor: float = ..., dtype: str = ...,
               threads: int = ..., progress: _Progress = ..., args: Sequence[str] = ...,
               nic_gbit: _Values = ..., oversubscription: _Values = ..., degrade: _Values = ...,
               **knobs: _Values) -> pd.DataFrame: ...
def run(trace: str | Sequence[str], nodes: int | None = ..., cluster: str = ..., *, progress: _Progress = ...,
        args: Sequence[str] = ...) -> pd.DataFrame: ...
def plan(model: str = ..., nodes: int = ..., cluster: str = ..., *, progress: _Progress = ...,
         args: Sequence[str] = ...) -> dict[str, Any]: ...
def catalog(what: str | None = ...) -> dict[str, pd.DataFrame]: ...
def list(what: str | None = ...) -> dict[str, pd.DataFrame]: ...

_Knobs = dict[str, _Value]

class Scenario:
    def __init__(self, model: str | None = ..., nodes: int | Iterable[int] | None = ..., cluster: str | None = ...,
                 *, nic_gbit: _Value = ..., oversubscription: _Value = ..., gpu: _Value = ..., profile: _Value = ...,
                 sharding: _Value = ..., batch_per_gpu: _Value = ..., global_batch: _Value = ...,
                 a2a_precision: _Value = ..., a2a_backward_precision: _Value = ..., all_reduce_precision: _Value = ...,
                 fidelity: _Value = ..., completion_quantum_ns: _Value = ..., embeddings: _Value = ...,
                 pipeline: _Value = ..., prefetch_cache: _Value = ..., cache_hit_rate: _Value = ...,
                 index_zipf_alpha: _Value = ..., cache_fraction: _Value = ..., hbm_reserve: _Value = ...,
                 dense_optimizer: _Value = ..., index_dtype: _Value = ..., degrade: _Value = ...,
                 **knobs: _Value) -> None: ...
    def set(self, nodes: int | Iterable[int] | None = ..., **knobs: _Value) -> Scenario: ...
    def to_json(self, indent: int | None = ...) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    @classmethod
    def from_json(cls, text: str | Mapping[str, Any], source: str = ...) -> Scenario: ...
    def save(self, path: str) -> None: ...
    @classmethod
    def load(cls, path: str) -> Scenario: ...
    def key(self) -> str: ...
    def __getitem__(self, field: str) -> Any: ...
    def run(self, nodes: int | Iterable[int] | None = ..., *, threads: int = ..., progress: _Progress = ...,
            args: Sequence[str] = ..., **vary: _Values) -> pd.DataFrame: ...

def sweep(scenarios: Iterable[Scenario], threads: int = ..., progress: _Progress = ...) -> pd.DataFrame: ...

class Results(pd.DataFrame): ...
