"""The controller's half of stopping early: the one place that feeds each run's confidence sequences and writes its stop.

Each run that may stop early (its header carries the seeded order, ``stops.RunOrder`` on the worker side) gets its
``RunSequences`` when its header arrives; every record of it is fed to them, held back there until the records before
it in the seeded order are in. Once every gate (and regression check) of the run is decided before its last instance,
the stop goes into the session's table (``stops.StopTable``), which every process reads before an item needs its
answer. After the loop the report asks which skipped items were past a stop, and each stopped run keeps only the
instances before it (``cut``).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..gates import Gate
from ..records import ItemRecord, RunHeader
from ..shards import instance_key
from ..stops import Stop, StopTable
from .aggregate import RunResults
from .regression import ComparisonPlan
from .sequential import RunSequences
from .verdicts import gates_of


class EarlyStop:
    """Records in, stops out: each stop-early run's sequences, and the stop written once every gate of it is decided."""

    def __init__(
        self,
        stops: StopTable | None,
        level: float = 0.95,
        gates: Sequence[Gate] = (),
        plan: ComparisonPlan | None = None,
    ) -> None:
        """``stops``: the session's early-stop table, which every process reads (None: no run can stop early);
        ``level``: the level of the confidence sequences; ``gates``: the session's gates (a run's marker gates come
        with its header); ``plan``: the baseline comparison, whose checks on a run must be decided too."""
        self.stops = stops
        self.level = level
        self.gates = tuple(gates)
        self.plan = plan
        self.sequences: dict[str, RunSequences] = {}  # per run that may stop early, fed in its seeded order
        self.problem: str | None = None  # the early-stop table could not be written: the workers ran on

    def describe(self, header: RunHeader) -> None:
        """A run's header arrived: a run that may stop early, with its order, gets its sequences (once)."""
        run = header.run
        if not (run.stop_early and header.order) or run.key in self.sequences:
            return
        paired, held = self.plan.paired_checks(run) if self.plan is not None else ([], [])
        groups = dict(zip(header.order, header.groups, strict=False))
        self.sequences[run.key] = RunSequences(run, gates_of(run, self.gates), header.order, self.level, held, paired, groups)

    def add(self, record: ItemRecord) -> None:
        """Feed one record (any order) to its run's sequences; the run's stop is written once they settle early."""
        sequences = self.sequences.get(record.run_key)
        if sequences is None or sequences.settled is not None:
            return
        settled = sequences.add(record)
        if settled is not None and settled.early:
            self._write(Stop(record.run_key, settled.n, settled.population, settled.reason()))

    def _write(self, stop: Stop) -> None:
        """Tell every process the run stopped: its items past the stop are skipped, and no shard of them is started."""
        if self.stops is None:
            return
        try:
            self.stops.write(stop)
        except (OSError, sqlite3.Error) as error:  # the workers run on; the report still uses the items before the stop
            self.problem = f"could not write the early-stop table {self.stops.path} ({error}); items past the stops ran"

    def past_stop(self, nodeid: str) -> bool:
        """Whether an item belongs to a run that stopped early, after the stop (skipped for that reason, not the user's)."""
        base = nodeid.rsplit("[", 1)[0]
        sequences = self.sequences.get(base)
        if sequences is None or not sequences.used or not nodeid.endswith("]"):
            return False
        return instance_key(nodeid, base) not in sequences.used

    def skips_counted(self, skipped: Iterable[str]) -> dict[str, int]:
        """Per run (its test's node id), the skipped items its gates must count: not those past an early stop, which
        the run's gates were decided without."""
        return dict(Counter(nodeid.rsplit("[", 1)[0] for nodeid in skipped if not self.past_stop(nodeid)))

    def cut(self, runs: Mapping[str, RunResults], skipped: Iterable[str]) -> None:
        """Each run that stopped early keeps the instances before its stop (answers past it that arrived first, under
        xdist, are counted, not used: the numbers must not depend on timing); every such run says how it went.
        ``skipped``: the items pytest skipped, of which those past a stop were not computed."""
        past = Counter(nodeid.rsplit("[", 1)[0] for nodeid in skipped if self.past_stop(nodeid))
        for key, sequences in self.sequences.items():
            run = runs.get(key)
            if run is None:
                continue
            summary = sequences.summary()
            if sequences.used:
                summary["answered_past_stop"] = run.keep_instances(sequences.used)
                summary["not_computed"] = past[key]
            run.early_stop = summary

    def paired(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Each stopped run's regression checks as its paired-difference sequences decided them (run key -> check ->
        its sequence), for the comparison with the baseline."""
        return {key: paired for key, sequences in self.sequences.items() if (paired := sequences.paired_data())}

    def close(self) -> None:
        """The session is over: its rows of the stop table go."""
        if self.stops is not None:
            self.stops.remove()
