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
from typing import Final

from rypsok.core.search.urls import DroppedUrl, DropReason, HostRules, NormalUrl, normalize

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


@dataclass(frozen=True, slots=True)
class EngineAnswer:
    """One engine's answer: its identifier, its preference and its results in order."""

    engine: str
    preference: int  # lower first when results tie
    results: Sequence[Observation]


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


@dataclass(frozen=True, slots=True)
class Ranking:
    results: tuple[RankedResult, ...]
    #: results_dropped counts per reason, only reasons that occurred, in name order
    dropped: tuple[tuple[DropReason, int], ...]


@dataclass(frozen=True, slots=True)
class _Candidate:
    engine: str
    preference: int
    rank: int
    normal: NormalUrl
    item: Observation

    @property
    def order(self) -> tuple[int, int, str]:
        # (engine, rank) is unique, so this orders candidates totally.
        return (self.rank, self.preference, self.engine)


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
    for answer in answers:
        if answer.engine in seen_engines:
            raise ValueError("an engine answered twice")
        seen_engines.add(answer.engine)
        for position, item in enumerate(answer.results, start=1):
            normal = normalize(item.url, rules)
            if isinstance(normal, DroppedUrl):
                dropped.setdefault(normal.reason, set()).add(item.url)
                continue
            groups.setdefault(normal.key, []).append(
                _Candidate(answer.engine, answer.preference, position, normal, item)
            )
    merged = [_merge(key, candidates) for key, candidates in groups.items()]
    merged.sort(key=_total_order)
    return Ranking(
        results=tuple(result for result, _ in merged[:max_results]),
        dropped=tuple((reason, len(dropped[reason])) for reason in sorted(dropped)),
    )


def fusion_score(ranks: Iterable[int]) -> int:
    """Reciprocal-rank fusion in integers: the sum of SCORE_SCALE // (RRF_K + rank)."""
    return sum(SCORE_SCALE // (RRF_K + r) for r in ranks)


def _merge(key: str, candidates: list[_Candidate]) -> tuple[RankedResult, _Candidate]:
    ordered = sorted(candidates, key=lambda c: c.order)
    lead = ordered[0]
    shown = lead
    if not lead.normal.https:
        shown = next((c for c in ordered if c.normal.https), lead)
    best: dict[str, _Candidate] = {}
    preference: dict[str, int] = {}
    for candidate in ordered:  # ascending, so the first per engine is its best
        best.setdefault(candidate.engine, candidate)
        preference[candidate.engine] = candidate.preference
    observations = tuple(Seen(c.engine, c.rank) for c in best.values())
    result = RankedResult(
        url=shown.normal.url,
        key=key,
        title=lead.item.title,
        snippet=lead.item.snippet,
        date=next((c.item.date for c in ordered if c.item.date is not None), None),
        observations=observations,
        score=fusion_score(c.rank for c in best.values()),
        engines=tuple(sorted(best, key=lambda e: (preference[e], e))),
        markup=lead.item.markup,
    )
    return result, lead


def _total_order(entry: tuple[RankedResult, _Candidate]) -> tuple[int, int, int, str]:
    result, lead = entry
    return (-result.score, lead.rank, lead.preference, result.key)
