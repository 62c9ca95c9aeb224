"""The answers of memrank's native API as Python objects.

Each dataclass holds the documented fields of one answer and, in ``raw``,
the answer's JSON as the server wrote it, so that fields a newer server adds
are not lost. Times are kept as the RFC 3339 strings the server writes
(Python 3.9's datetime cannot read nanoseconds or "Z"). Numbers the server
writes as null (not finite) are None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, TypedDict, Union

__all__ = [
    "PointId",
    "Outcome",
    "UseResult",
    "Explanation",
    "RetrievedMemory",
    "Retrieval",
    "AuditRecord",
    "MemoryHistory",
    "Stats",
    "ForgetReport",
    "CreatedCollection",
]

# A point id as Qdrant writes it: an unsigned integer or a UUID string.
PointId = Union[int, str]

JSON = Dict[str, Any]


def _list(v: Any) -> list:
    return list(v) if isinstance(v, list) else []


def _dict(v: Any) -> dict:
    return dict(v) if isinstance(v, dict) else {}


@dataclass(frozen=True)
class Outcome:
    """What the write path decided about one observation, confirmation,
    correction or use (docs/write-path.md, "The outcome")."""

    decision: str
    """inserted, restatement, independent, contradiction, rejected,
    confirmed, corrected or used."""
    memory_id: str
    """The memory the observation ended up in."""
    confidence: Optional[float]
    """That memory's stored confidence afterwards."""
    observations: int
    """Its n afterwards."""
    dedup_tier: int
    """1 text hash, 2 vector, 3 judge; 0 when nothing matched."""
    judge: Optional[JSON]
    superseded: Optional[str]
    """The memory a contradiction or correction superseded."""
    merged: List[str]
    reason: Optional[str]
    replayed: bool
    """True when the observation_id had been seen: nothing changed."""
    already_counted: bool
    """True on a confirmation whose session had already confirmed the
    memory (or, without a session_id, when one without a session had):
    observations unchanged."""
    created_collection: bool
    attribution: Optional[JSON]
    flags: List[str]
    uses: Optional[int]
    """The memory's use count after a ``used`` decision."""
    warnings: List[str]
    """What the caller may not expect of the stored memory, e.g. that its
    confidence is below the retrieval gate (a text observed without its
    source, weak_inference by default): it then comes back only as the
    best match of a question, flagged ``below_gate``."""
    raw: JSON = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: JSON) -> "Outcome":
        return cls(
            decision=d.get("decision", ""),
            memory_id=str(d.get("memory_id", "")),
            confidence=d.get("confidence"),
            observations=d.get("observations", 0),
            dedup_tier=d.get("dedup_tier", 0),
            judge=d.get("judge"),
            superseded=d.get("superseded"),
            merged=_list(d.get("merged")),
            reason=d.get("reason"),
            replayed=bool(d.get("replayed", False)),
            already_counted=bool(d.get("already_counted", False)),
            created_collection=bool(d.get("created_collection", False)),
            attribution=d.get("attribution"),
            flags=_list(d.get("flags")),
            uses=d.get("uses"),
            warnings=_list(d.get("warnings")),
            raw=d,
        )


@dataclass(frozen=True)
class UseResult:
    """One id of a batch ``used`` call: its outcome, or ``error``
    ("not_found" for an unknown memory or another tenant's)."""

    memory_id: str
    outcome: Optional[Outcome]
    error: Optional[str]
    raw: JSON = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: JSON) -> "UseResult":
        o = d.get("outcome")
        return cls(
            memory_id=str(d.get("memory_id", "")),
            outcome=Outcome.from_json(o) if isinstance(o, dict) else None,
            error=d.get("error"),
            raw=d,
        )


class Explanation(TypedDict, total=False):
    """Every factor behind one retrieved memory's score
    (docs/read-path.md); a plain dict at run time.

    weight = base x freshness_factor x access_boost x confidence_factor,
    where freshness_factor = 1 - freshness_weight x focus x (1 - freshness)
    (focus: how much the query is about recent memories, 0 to 1) and
    access_boost = 1 + access_weight x r(access_count). ``days_to_archive``
    is the idle days until the tier label turns archived (None: never); an
    archived tier stays in answers. ``within_decay_floor`` says the memory
    has not crossed its decay floor (or is protected)."""

    unscored: bool
    source: Optional[float]
    observations: int
    repetition: Optional[float]
    extractor: Optional[float]
    type: Optional[float]
    grounding: str
    formula: Optional[float]
    grounding_penalty: Optional[float]
    computed: Optional[float]
    stored_confidence: bool
    computed_confidence: bool
    confidence: Optional[float]
    age_days: Optional[float]
    half_life: Optional[float]
    freshness: Optional[float]
    freshness_weight: Optional[float]
    focus: Optional[float]
    freshness_factor: Optional[float]
    idle_days: Optional[float]
    decay_floor: Optional[float]
    days_to_archive: Optional[float]
    access_count: int
    access_weight: Optional[float]
    access_boost: Optional[float]
    confidence_weight: Optional[float]
    confidence_factor: Optional[float]
    base: Optional[float]
    weight: Optional[float]
    within_decay_floor: bool
    protected: bool
    tier: str
    bucket: Optional[str]
    below_gate: bool
    render: bool


@dataclass(frozen=True)
class RetrievedMemory:
    """One result of a retrieve, with the factors of its score. The
    factors are None when the collection was passed through (not
    re-ranked)."""

    id: PointId
    score: Optional[float]
    """The weight memrank ranked it by (Qdrant's score when passed
    through)."""
    base_score: Optional[float]
    weight: Optional[float]
    guard: Optional[str]
    """relevant (counted as read), below_band, below_floor or off."""
    confidence: Optional[float]
    freshness: Optional[float]
    """f = 0.5^(age / half-life)."""
    freshness_factor: Optional[float]
    """What age took off the weight for this query."""
    access_count: Optional[int]
    access_boost: Optional[float]
    tier: Optional[str]
    """The tier as of the answer's clock (``at``, else now)."""
    stored_tier: Optional[str]
    """The tier the payload holds, as the last consolidation wrote it."""
    bucket: Optional[str]
    retrievable: bool
    """False only for an archived memory returned with include_archived."""
    protected: bool
    render: bool
    below_gate: bool
    """Below the confidence gate, returned as the best match."""
    folded_ids: List[PointId]
    dedup: Optional[str]
    judge_consulted: bool
    problems: List[str]
    archived: Optional[str]
    payload: Optional[JSON]
    explanation: Optional[Explanation]
    """Present when the request asked to explain (the default)."""
    raw: JSON = field(repr=False, compare=False)

    @property
    def text(self) -> Optional[str]:
        """The memory's text (payload ``text``), None when not returned."""
        t = (self.payload or {}).get("text")
        return t if isinstance(t, str) else None

    @classmethod
    def from_json(cls, d: JSON) -> "RetrievedMemory":
        return cls(
            id=d.get("id", ""),
            score=d.get("score"),
            base_score=d.get("base_score"),
            weight=d.get("weight"),
            guard=d.get("guard"),
            confidence=d.get("confidence"),
            freshness=d.get("freshness"),
            freshness_factor=d.get("freshness_factor"),
            access_count=d.get("access_count"),
            access_boost=d.get("access_boost"),
            tier=d.get("tier"),
            stored_tier=d.get("stored_tier"),
            bucket=d.get("bucket"),
            retrievable=bool(d.get("retrievable", False)),
            protected=bool(d.get("protected", False)),
            render=bool(d.get("render", False)),
            below_gate=bool(d.get("below_gate", False)),
            folded_ids=_list(d.get("folded_ids")),
            dedup=d.get("dedup"),
            judge_consulted=bool(d.get("judge_consulted", False)),
            problems=_list(d.get("problems")),
            archived=d.get("archived") or None,
            payload=d.get("payload"),
            explanation=d.get("explanation"),
            raw=d,
        )


@dataclass(frozen=True)
class Retrieval:
    """The answer of a retrieve: the results, best first, and how the
    collection was served."""

    results: List[RetrievedMemory]
    reranked: bool
    """False when the collection was passed through (pass_through says why)."""
    mode: str
    detection: str
    pass_through: Optional[str]
    embedder: Optional[JSON]
    guard: Optional[JSON]
    """The relevance band: ``relevant``, ``beyond`` and ``folded`` count
    the returned results; ``focus`` is the query's focus on recent
    memories."""
    shadow: Optional[JSON]
    dropped: Optional[List[JSON]]
    """Candidates left out and why (superseded, not_retrievable,
    archived, below_gate, folded); None when not re-ranked."""
    at: Optional[str]
    """The time the answer was computed as of (RFC 3339), when one was
    asked."""
    empty: Optional[str]
    """Why a re-ranked answer is empty although the store had
    candidates."""
    time: float
    raw: JSON = field(repr=False, compare=False)

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, i: int) -> RetrievedMemory:
        return self.results[i]

    @classmethod
    def from_json(cls, d: JSON) -> "Retrieval":
        return cls(
            results=[RetrievedMemory.from_json(r) for r in _list(d.get("result"))],
            reranked=bool(d.get("reranked", False)),
            mode=d.get("mode", ""),
            detection=d.get("detection", ""),
            pass_through=d.get("pass_through"),
            embedder=d.get("embedder"),
            guard=d.get("guard"),
            shadow=d.get("shadow"),
            dropped=d.get("dropped"),
            at=d.get("at") or None,
            empty=d.get("empty") or None,
            time=d.get("time", 0.0),
            raw=d,
        )


@dataclass(frozen=True)
class AuditRecord:
    """One change of a memory, as its audit trail records it
    (docs/write-path.md, "The audit companion")."""

    memory_id: str
    observation_id: str
    reason: str
    """insert, restatement, independent, merge, confirm, correct,
    contradiction, superseded, corroboration, used, forget, delete, ..."""
    old: Optional[float]
    new: Optional[float]
    old_n: int
    new_n: int
    at: str
    """RFC 3339, UTC; "" when unknown."""
    session_id: str
    turn_id: str
    source: Optional[float]
    extractor: Optional[float]
    type: Optional[float]
    grounding: str
    decision: str
    related: Optional[str]
    forgotten: bool
    attribution: Optional[str]
    attribution_from: Optional[str]
    note: Optional[str]
    old_tier: Optional[str]
    new_tier: Optional[str]
    raw: JSON = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: JSON) -> "AuditRecord":
        return cls(
            memory_id=str(d.get("memory_id", "")),
            observation_id=d.get("observation_id", ""),
            reason=d.get("reason", ""),
            old=d.get("old"),
            new=d.get("new"),
            old_n=d.get("old_n", 0),
            new_n=d.get("new_n", 0),
            at=d.get("at", ""),
            session_id=d.get("session_id", ""),
            turn_id=d.get("turn_id", ""),
            source=d.get("source"),
            extractor=d.get("extractor"),
            type=d.get("type"),
            grounding=d.get("grounding", ""),
            decision=d.get("decision", ""),
            related=d.get("related"),
            forgotten=bool(d.get("forgotten", False)),
            attribution=d.get("attribution"),
            attribution_from=d.get("attribution_from"),
            note=d.get("note"),
            old_tier=d.get("old_tier"),
            new_tier=d.get("new_tier"),
            raw=d,
        )


@dataclass(frozen=True)
class MemoryHistory:
    """A memory as stored (its payload) and its audit trail, oldest first."""

    id: str
    collection: str
    payload: JSON
    audit: List[AuditRecord]
    raw: JSON = field(repr=False, compare=False)

    @property
    def text(self) -> Optional[str]:
        t = self.payload.get("text")
        return t if isinstance(t, str) else None

    @property
    def superseded_by(self) -> Optional[str]:
        """The memory that superseded this one, None when none did."""
        s = self.payload.get("superseded_by")
        return str(s) if s not in (None, "") else None

    @property
    def retrievable(self) -> bool:
        return self.payload.get("retrievable", True) is not False

    @classmethod
    def from_json(cls, d: JSON) -> "MemoryHistory":
        return cls(
            id=str(d.get("id", "")),
            collection=d.get("collection", ""),
            payload=_dict(d.get("payload")),
            audit=[AuditRecord.from_json(a) for a in _list(d.get("audit")) if isinstance(a, dict)],
            raw=d,
        )


@dataclass(frozen=True)
class Stats:
    """A collection's memories counted by bucket, tier and type, the server
    process's write decisions in the collection and its judge use across
    every collection (docs/write-path.md, "Stats")."""

    collection: str
    method: str
    """counted (payload indexes) or scanned (exact=True)."""
    memories: int
    """Memories answers draw from: neither superseded nor archived."""
    archived: int
    """Memories a person or a review archived (out of answers);
    ``tiers["archived"]`` counts those whose tier label is archived, which
    answers still return."""
    superseded: int
    average_confidence: Optional[float]
    buckets: Dict[str, int]
    histogram: List[int]
    tiers: Dict[str, int]
    tiers_as_of: Optional[str]
    types: Dict[str, int]
    decisions: Dict[str, int]
    """The server process's write decisions in this collection since it
    started (empty with tenancy on)."""
    judge: JSON
    """The server process's judge use, across every collection (zeros with
    tenancy on)."""
    raw: JSON = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: JSON) -> "Stats":
        return cls(
            collection=d.get("collection", ""),
            method=d.get("method", ""),
            memories=d.get("memories", 0),
            archived=d.get("archived", 0),
            superseded=d.get("superseded", 0),
            average_confidence=d.get("average_confidence"),
            buckets=_dict(d.get("buckets")),
            histogram=_list(d.get("histogram")),
            tiers=_dict(d.get("tiers")),
            tiers_as_of=d.get("tiers_as_of"),
            types=_dict(d.get("types")),
            decisions=_dict(d.get("decisions")),
            judge=_dict(d.get("judge")),
            raw=d,
        )


@dataclass(frozen=True)
class ForgetReport:
    """What forgetting a session or deleting a memory changed
    (docs/forgetting.md)."""

    collection: str
    memories_updated: int
    memories_deleted: int
    audit_redacted: int
    audit_deleted: int
    audit_kept: int
    audit_policy: str
    raw: JSON = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: JSON) -> "ForgetReport":
        return cls(
            collection=d.get("collection", ""),
            memories_updated=d.get("memories_updated", 0),
            memories_deleted=d.get("memories_deleted", 0),
            audit_redacted=d.get("audit_redacted", 0),
            audit_deleted=d.get("audit_deleted", 0),
            audit_kept=d.get("audit_kept", 0),
            audit_policy=d.get("audit_policy", ""),
            raw=d,
        )


@dataclass(frozen=True)
class CreatedCollection:
    """What create_collection made, or found (PUT /v1/collections/{name},
    docs/write-path.md)."""

    collection: str
    created: bool
    """This call made the collection."""
    existed: bool
    """It was a memory collection already, kept as it is."""
    model: str
    """The embedder the collection records, e.g. memrank-local-sem-v1:384."""
    dimensions: int
    """Its vectors' size."""
    distance: str
    """Cosine."""
    audit_collection: str
    """Its audit companion (<collection>_memrank_audit)."""
    raw: JSON = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: JSON) -> "CreatedCollection":
        return cls(
            collection=d.get("collection", ""),
            created=bool(d.get("created", False)),
            existed=bool(d.get("existed", False)),
            model=d.get("model", ""),
            dimensions=d.get("dimensions", 0),
            distance=d.get("distance", ""),
            audit_collection=d.get("audit_collection", ""),
            raw=d,
        )
