"""Deduplication, rank fusion and the total order of search results.

One pure function, ``rank``, from the engines' answers to the ordered,
merged results (REQ-RANK-001, REQ-RANK-004 to REQ-RANK-007, REQ-ARCH-004).

Theory of operation:

1. Every observation's URL goes through ``urls.normalize``. A dropped URL is
   counted once per distinct engine text and reason; it still held a place
   in its engine's list, so ranks are the positions the engine gave (1-based).
2. Observations with one comparison key form one result. Each engine counts
   once per result, at its best rank (an engine that lists one page twice
   does not agree with itself).
3. The lead observation of a result is the first by (rank, engine preference,
   engine id). It gives the title and the snippet (and their provenance, raw
   or decoded, which picks the cleaner) and the URL shown, except
   that an https URL replaces an http lead: the first https observation in
   the same order. The date is the first supplied one in that order.
4. Score: the sum over the result's engines of ``SCORE_SCALE // (RRF_K + rank)``,
   integers only, so the sum is the same in any order of addition.
5. Order: score descending, then the lead's rank, the lead engine's preference
   and the comparison key ascending. Keys are unique after merging, so this is
   a total order; then the list is cut to ``max_results``.

Nothing here depends on the order in which the answers arrive: every choice is
a minimum under an explicit key, and the output is sorted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from rypsok.core.search.urls import (
    DroppedUrl,
    DropReason,
    HostMemo,
    HostRules,
    NormalUrl,
    UrlResult,
    normalize,
)

#: Reciprocal-rank constant: large enough that agreement between engines
#: outweighs one engine's first place (two engines at rank 10 beat one at 1).
RRF_K: Final = 60
#: Integer scale of 1/(RRF_K + rank). At rank 1000 neighbouring ranks still
#: differ by about 9, so truncation never makes two ranks equal in practice.
SCORE_SCALE: Final = 10**9


@dataclass(frozen=True, slots=True)
class Observation:
    """One result as an engine's driver returned it (after unwrapping redirects)."""

    url: str
    title: str
    snippet: str
    date: str | None = None
    # Provenance of title and snippet: True for raw provider text (markup and entities
    # still in it), False for text a parser already decoded (RawResult.markup).
    markup: bool = True
    sources: tuple[str, ...] = ()  # a metasearch engine's upstreams (RawResult.sources)


class Observed(Protocol):
    """What rank reads of an observation: an Observation, or the driver's RawResult, which
    has the same fields (the pipeline passes those as they are, without a copy)."""

    @property
    def url(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def snippet(self) -> str: ...
    @property
    def date(self) -> str | None: ...
    @property
    def markup(self) -> bool: ...
    @property
    def sources(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class EngineAnswer:
    """One engine's answer: its identifier, its preference and its results in order."""

    engine: str
    preference: int  # lower first when results tie
    results: Sequence[Observed]


@dataclass(frozen=True, slots=True)
class Seen:
    """That an engine returned the result, and at which rank (1 is first)."""

    engine: str
    rank: int


@dataclass(frozen=True, slots=True)
class RankedResult:
    """A merged result (REQ-RANK-001). ``key`` and ``score`` are never returned."""

    url: str
    key: str
    title: str
    snippet: str
    date: str | None
    observations: tuple[Seen, ...]  # one per engine, best first
    score: int
    engines: tuple[str, ...]  # by preference, then identifier
    markup: bool = True  # the lead observation's provenance, which title and snippet share
    # Attribution below an engine: "<engine>/<upstream>" for each upstream a metasearch
    # engine named for its best observation of the result, in the order of engines.
    sources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Ranking:
    results: tuple[RankedResult, ...]
    #: results_dropped counts per reason, only reasons that occurred, in name order
    dropped: tuple[tuple[DropReason, int], ...]


# One observation of a result: (rank, engine preference, engine, normalized URL,
# observation). A plain tuple, so candidates sort in C by their first three fields, which
# (engine, rank) makes unique: the comparison never reaches the last two.
_Candidate = tuple[int, int, str, NormalUrl, Observed]
# A merged result before it is built: its place in the total order (negated score, lead's
# rank, lead's preference, comparison key), its candidates in order and each engine's best
# one. Keys are unique, so sorting these tuples never compares past the key.
_Entry = tuple[int, int, int, str, list[_Candidate], dict[str, _Candidate]]


def rank(
    answers: Iterable[EngineAnswer], max_results: int, rules: HostRules | None = None
) -> Ranking:
    """The merged, ordered and cut results of the engines' answers.

    Pure and deterministic: the same answers in any order give equal output.
    Raises ValueError when max_results is negative or an engine appears twice.
    """
    if max_results < 0:
        raise ValueError("max_results must not be negative")
    groups: dict[str, list[_Candidate]] = {}
    dropped: dict[DropReason, set[str]] = {}
    seen_engines: set[str] = set()
    # One search's URLs share few hosts and often whole URLs: each is judged once here.
    hosts: HostMemo = {}
    normals: dict[str, UrlResult] = {}
    for answer in answers:
        if answer.engine in seen_engines:
            raise ValueError("an engine answered twice")
        seen_engines.add(answer.engine)
        engine, preference = answer.engine, answer.preference
        for position, item in enumerate(answer.results, start=1):
            url = item.url
            normal = normals.get(url)
            if normal is None:
                normal = normals[url] = normalize(url, rules, hosts)
            if isinstance(normal, DroppedUrl):
                dropped.setdefault(normal.reason, set()).add(url)
                continue
            candidate = (position, preference, engine, normal, item)
            group = groups.get(normal.key)
            if group is None:
                groups[normal.key] = [candidate]
            else:
                group.append(candidate)
    entries = [_entry(key, candidates) for key, candidates in groups.items()]
    entries.sort()
    # Only the results that survive the cut are built.
    return Ranking(
        results=tuple(_build(entry) for entry in entries[:max_results]),
        dropped=tuple((reason, len(dropped[reason])) for reason in sorted(dropped)),
    )


def fusion_score(ranks: Iterable[int]) -> int:
    """Reciprocal-rank fusion in integers: the sum of SCORE_SCALE // (RRF_K + rank)."""
    return sum(SCORE_SCALE // (RRF_K + r) for r in ranks)


def _entry(key: str, candidates: list[_Candidate]) -> _Entry:
    if len(candidates) == 1:  # one engine, once: most results
        lead = candidates[0]
        return (-(SCORE_SCALE // (RRF_K + lead[0])), lead[0], lead[1], key, candidates, {})
    candidates.sort()
    best: dict[str, _Candidate] = {}
    for candidate in candidates:  # ascending, so the first per engine is its best
        best.setdefault(candidate[2], candidate)
    lead = candidates[0]
    score = fusion_score(c[0] for c in best.values())
    return (-score, lead[0], lead[1], key, candidates, best)


def _build(entry: _Entry) -> RankedResult:
    negated, _, _, key, ordered, best = entry
    lead = ordered[0]
    item = lead[4]
    if not best:  # a single candidate
        return RankedResult(
            url=lead[3].url,
            key=key,
            title=item.title,
            snippet=item.snippet,
            date=item.date,
            observations=(Seen(lead[2], lead[0]),),
            score=-negated,
            engines=(lead[2],),
            markup=item.markup,
            sources=_upstreams((lead,)) if item.sources else (),
        )
    shown = lead
    if not lead[3].https:
        for candidate in ordered:
            if candidate[3].https:
                shown = candidate
                break
    date = item.date
    if date is None:
        for candidate in ordered:
            if candidate[4].date is not None:
                date = candidate[4].date
                break
    firsts = best.values()
    ordered_firsts = sorted(firsts, key=lambda c: (c[1], c[2]))
    return RankedResult(
        url=shown[3].url,
        key=key,
        title=item.title,
        snippet=item.snippet,
        date=date,
        observations=tuple([Seen(c[2], c[0]) for c in firsts]),
        score=-negated,
        # By preference, then identifier: the (preference, engine) pairs sort as they are.
        engines=tuple([c[2] for c in ordered_firsts]),
        markup=item.markup,
        sources=_upstreams(ordered_firsts),
    )


def _upstreams(candidates: Iterable[_Candidate]) -> tuple[str, ...]:
    """ "<engine>/<upstream>" for each upstream a metasearch engine named, in order."""
    return tuple([f"{c[2]}/{name}" for c in candidates for name in c[4].sources])
