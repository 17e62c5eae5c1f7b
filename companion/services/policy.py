"""Who may write and see what in a match: pure functions of the game, the caller and the event or view.

The match service asks them itself on every write (``append``, ``act``, ``undo``, ``redo``, ``final_roll``,
``enter_result``), so no route can forget a rule; the web asks them for what it shows (a match's view, its
events, its export). The web keeps seats, links and pages; the rules are here.

A caller (:class:`Caller`) is a role and, for a phone seated at the match, its seat. The CLI, the GPIO panel,
the clock runner and imports write as :data:`ORGANISER`. The rules:

- **The Pi's mark**: nobody sends ``rolled_by``; the service marks what it drew at random itself.
- **The result entered by hand** (``result.entered``) of a match the phones follow: the organiser's
  correction alone (docs/rulings.md#the-organisers-result); in a match created to take only its result,
  anyone's of the table.
- **Corrections outside the rules** (a game's ``ORGANISER_EVENTS``: ``{type: None}`` for the whole event
  type, ``{type: field}`` when only a truthy ``data[field]`` is): the organiser's alone.
- **A player's own secret** (a game's ``OWN_SECRET_EVENT_TYPES``: conquest's secret objective): recorded,
  redone or undone only by the owner's seat or an organiser; reset (the game's ``SECRET_RESETS``) by an
  organiser, or by the owner's phone once its seat is confirmed, for a secret recorded before it sat.
- **A refusal that could tell a secret** (``SECRET_REFUSAL_EVENT_TYPES``; of those, the refusals of
  ``SECRET_REFUSAL_ALWAYS`` and the sentences of ``SECRET_REFUSAL_TEMPLATES`` when the game names them):
  another player's event about an owner's secret is refused without its reason.
- **The Pi's draws** (an event marked ``rolled_by: "pi"``: dice, a deal, a turn's card; ``"dice"``: faces
  the box read from the table's smart dice): undone only by an organiser (a player who dislikes a draw may
  not draw again).
- **A new match's options from a player's phone**: at most 4 KiB (a whole board or map is an organiser's).
- **What a phone sees**: organisers everything; others the game's ``public_view``/``public_summary``/
  ``public_event`` until the end turns every secret face up (docs/rulings.md, "Secrets").
- **A player's secret asked about** (a hand in the reinforcement calculator): told to the owner's seat and the
  organisers; a refusal that would name it is quiet to the others. **A ranking** that counts secret
  objectives: an organiser's until the end.
- **Exports** of a game with secrets: an organiser's while the match is open.
- **Playing for another seat** (docs/rulings.md#playing-for-another-seat): a phone may record a move of
  another seat (helping at the table) and the event keeps who wrote it (``by``: :func:`writer_of`), which the
  history says and the helped seat's phone shows with an undo. A match set to ``options.phones = "own-seat"``
  (an organiser's choice, at creation or later) refuses, from a player's phone, a move for any seat but its
  own (:func:`check_own_seat`); the organiser's phone records for anyone; the table's events that act for no
  seat (the deal, the clock, an intrigue, the end) are anyone's.
"""

from __future__ import annotations

from dataclasses import dataclass

from companion.base.errors import ForbiddenError, InputError, RuleError
from companion.core.match import MARKS, PI_MARK, RESULT

ROLES = ("viewer", "player", "organiser")

# Games with ``public_view`` but no ``public_event``: the data of these event types is secret (a game may say
# otherwise with a module-level ``SECRET_EVENT_TYPES``).
DEFAULT_SECRET_EVENT_TYPES = frozenset({"objective.set"})


@dataclass(frozen=True)
class Caller:
    """Who writes or looks: ``role`` (``organiser``, ``player`` or ``viewer``) and, for a phone seated at the
    match, the player it is seated as (``seat``) and, once an organiser or the other seated phones confirmed
    that seat, the instant it sat (``sat_at``: docs/rulings.md#seats)."""

    role: str = "organiser"
    seat: str | None = None
    sat_at: str | None = None  # when this phone sat at ``seat``, once its seat is confirmed (else None)
    phone: bool = False  # a phone's request (the web): its events keep who wrote them (``writer_of``)

    @property
    def organiser(self) -> bool:
        return self.role == "organiser"


ORGANISER = Caller("organiser")


# -- writing --------------------------------------------------------------------------------------
def is_pi_roll(event: dict) -> bool:
    """An event the Pi drew at random, or whose faces the box read from the table's smart dice (the
    service's mark, ``"pi"`` or ``"dice"``)."""
    return (event.get("data") or {}).get(PI_MARK) in MARKS


def organiser_field(module, type_: str, data) -> str | None:
    """The field that makes an event one only an organiser records (a hand correction outside the rules:
    the game module's ``ORGANISER_EVENTS``, ``{type: field or None}``), or ``None`` for anyone's event.
    ``"type"`` when the event type itself is the organiser's; a field of ``data`` when only its truthy
    value is (``clock.start {override: true}``)."""
    spec = getattr(module, "ORGANISER_EVENTS", {})
    if type_ not in spec:
        return None
    field = spec[type_]
    if field is None:
        return "type"
    return field if isinstance(data, dict) and data.get(field) else None


def _owner(data) -> str | None:
    p = data.get("player") if isinstance(data, dict) else None
    return p if isinstance(p, str) else None


def _own_secret_types(module) -> frozenset:
    return getattr(module, "OWN_SECRET_EVENT_TYPES", frozenset())


def check_sent_data(data) -> None:
    """Nobody sends the Pi's mark: the service marks what it drew at random itself."""
    if isinstance(data, dict) and PI_MARK in data:
        raise ForbiddenError("only the Pi marks what it drew at random: {field} cannot be sent", PI_MARK,
                             field=PI_MARK)


def reset_field(module, type_: str) -> str | None:
    """The field that makes an event of ``type_`` a reset of a secret recorded before (the game's
    ``SECRET_RESETS``: conquest's ``objective.set {replace: true}``), or None."""
    return getattr(module, "SECRET_RESETS", {}).get(type_)


def may_reset(module, caller: Caller, player: str, type_: str | None, effective) -> bool:
    """Whether ``caller`` may reset ``player``'s secret of ``type_`` (None: any the game resets;
    docs/rulings.md#seats): an organiser; else the phone seated as ``player`` whose seat is confirmed
    (``sat_at``) when the secret in effect (``effective``: the match's events in effect) was recorded before
    it sat, by whoever held the seat."""
    if caller.organiser:
        return True
    types = [type_] if type_ is not None else list(getattr(module, "SECRET_RESETS", {}))
    if caller.seat != player or caller.sat_at is None or not any(reset_field(module, t) for t in types):
        return False
    recorded = [e for e in effective if e["type"] in types and _owner(e.get("data")) == player]
    return bool(recorded) and recorded[-1]["at"] < caller.sat_at


def check_write(module, players: list[str], caller: Caller, type_: str, data, result_only: bool = False,
                effective=()) -> None:
    """May ``caller`` record an event ``type_`` with ``data`` (what the caller sent) in a match of
    ``module`` between ``players`` (``result_only``: a match created to take only its result; ``effective``:
    its events in effect)? Raises ForbiddenError naming the field; returns None when it may."""
    if caller.organiser:
        return
    reset = reset_field(module, type_)
    if reset is not None and isinstance(data, dict) and data.get(reset):
        owner = _owner(data)
        if owner in players and not may_reset(module, caller, owner, type_, effective):
            raise ForbiddenError("{owner}'s secret is reset only by an organiser, or by {owner}'s phone once its "
                                 "seat is confirmed and for a secret recorded before it sat", reset, owner=owner)
    if type_ == RESULT and not result_only:
        raise ForbiddenError("only an organiser enters the result of a match the phones follow (it ends "
                             "the match as a correction)", "type")
    field = organiser_field(module, type_, data)
    if field == "type":
        raise ForbiddenError("only an organiser may record this correction of the board (it changes "
                             "the match outside the rules)", field)
    if field is not None:
        raise ForbiddenError("only an organiser may record {event} with {option} (it changes the match "
                             "outside the rules)", field, event=type_, option=field)
    owner = _owner(data)
    if type_ in _own_secret_types(module) and owner in players and owner != caller.seat:
        raise ForbiddenError("only {owner}'s own phone (seated as {owner}) or an organiser records {owner}'s "
                             "secret", "player", owner=owner)


def secret_refused_for(module, players: list[str], caller: Caller, type_: str, data) -> str | None:
    """When a refusal of this write must not say why (the reason may name another player's secret): the
    secret's owner; else None (the refusal is told with its reason)."""
    if caller.organiser:
        return None
    secret = _own_secret_types(module) | getattr(module, "SECRET_REFUSAL_EVENT_TYPES", frozenset())
    owner = _owner(data)
    if type_ not in secret or owner not in players or owner == caller.seat:
        return None  # (a name not in the match: the rules refuse it, naming the field)
    return owner


def tells_secret(module, type_: str, exc: RuleError) -> bool:
    """Whether this refusal of ``type_`` may tell a secret: every refusal of the game's
    ``SECRET_REFUSAL_ALWAYS`` types (default: all its ``SECRET_REFUSAL_EVENT_TYPES``), and of the others the
    ones whose sentence is in ``SECRET_REFUSAL_TEMPLATES`` (a refusal that names an amount or a card)."""
    templates = getattr(module, "SECRET_REFUSAL_TEMPLATES", None)
    always = getattr(module, "SECRET_REFUSAL_ALWAYS", None)
    if templates is None:
        return True
    return type_ in (always or frozenset()) or exc.template in templates


def quiet_refusal(owner: str) -> RuleError:
    """The refusal told to anyone but ``owner``'s phone and the organisers."""
    return RuleError("refused for {owner}: the reason concerns {owner}'s secret, so only {owner}'s phone or an "
                     "organiser is told it", "player", owner=owner)


def check_undo(module, caller: Caller, last: dict | None) -> None:
    """May ``caller`` take back ``last`` (the latest event in effect)? Raises ForbiddenError."""
    if caller.organiser or last is None:
        return
    owner = _owner(last.get("data"))
    if last["type"] in _own_secret_types(module) and owner is not None and owner != caller.seat:
        raise ForbiddenError("the undo would take back {owner}'s secret: only {owner}'s own phone or an "
                             "organiser may", "expected_seq", owner=owner)
    if is_pi_roll(last):
        if last["data"][PI_MARK] == "dice":
            raise ForbiddenError("the box read these dice from the table: only an organiser may undo "
                                 "them (and so roll them again)", "type")
        raise ForbiddenError("the Pi drew this at random (dice, a deal or a card): only an organiser "
                             "may undo it (and so draw again)", "type")


# -- playing for another seat (docs/rulings.md#playing-for-another-seat) -----------------------------
PHONES = ("any-seat", "own-seat")  # options.phones: who a player's phone may record for (default: any seat)
PHONES_DEFAULT = "any-seat"


def phones_rule(options) -> str:
    """A match's ``options.phones``: ``"any-seat"`` (the default: a phone may help another seat, and it is
    shown) or ``"own-seat"`` (each player's phone plays its own seat)."""
    value = options.get("phones") if isinstance(options, dict) else None
    return value if value in PHONES else PHONES_DEFAULT


def check_phones(value) -> str:
    if value not in PHONES:
        raise InputError("must be one of {names}", "phones", names=", ".join(PHONES))
    return value


def acting_seat(module, players: list[str], state, type_: str, data) -> tuple[str | None, str]:
    """The seat an event acts for and the field that names it: the game's ``acting_player(state, type,
    data)`` when it has one (a conquest combat names its attacker by the city it leaves), else
    ``data.player``; ``(None, "player")`` for the table's events that name no seat of the match (the deal,
    the clock, an intrigue, the end)."""
    hook = getattr(module, "acting_player", None)
    found = hook(state, type_, data) if hook is not None else None
    player, field = found if found is not None else (_owner(data), "player")
    return (player, field) if player in players else (None, "player")


def writer_of(caller: Caller, acts_for: str | None) -> dict | None:
    """What an event keeps of who wrote it (its ``by``): for a phone's write, the writer's role, the seat its
    phone holds and, when the event acts for another seat, that seat (``for``); None for the box's own
    writes (the CLI, the GPIO panel, the clock runner)."""
    if not caller.phone:
        return None
    out = {"role": caller.role}
    if caller.seat is not None:
        out["seat"] = caller.seat
    if acts_for is not None and acts_for != caller.seat:
        out["for"] = acts_for
    return out


def check_own_seat(caller: Caller, options, acts_for: str | None, field: str = "player",
                   undo: bool = False) -> None:
    """In a match set to ``phones: "own-seat"``, a player's phone records (or, ``undo``, takes back) only the
    moves of its own seat and the table's (``acts_for`` None). Organisers record for anyone. Raises
    ForbiddenError naming ``field``."""
    if caller.organiser or acts_for is None or acts_for == caller.seat or phones_rule(options) != "own-seat":
        return
    field = "expected_seq" if undo else field
    if caller.seat is None:
        exc = ForbiddenError("in this match each phone plays its own seat: a phone with no seat records no move "
                             "of {player}'s (sit down as {player}, or ask an organiser)", field, player=acts_for)
    elif undo:
        exc = ForbiddenError("in this match each phone plays its own seat: {seat}'s phone cannot undo "
                             "{player}'s move ({player}'s phone or an organiser may)", field, seat=caller.seat,
                             player=acts_for)
    else:
        exc = ForbiddenError("in this match each phone plays its own seat: {seat}'s phone cannot record "
                             "{player}'s move ({player}'s phone or an organiser records it)", field,
                             seat=caller.seat, player=acts_for)
    exc.code = "own_seat"  # (the pages say the sentence alone: it is the organiser's choice, not the role)
    raise exc


PLAYER_OPTIONS_MAX = 4 * 1024


def check_options_size(options, organiser: bool) -> None:
    """A new match's options from a player's phone (the clock, the variants, a board named by its id, the
    season): at most ``PLAYER_OPTIONS_MAX`` bytes of JSON. A board or a map document given whole is an
    organiser's."""
    import json

    if organiser or not options:
        return
    size = len(json.dumps(options, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    if size > PLAYER_OPTIONS_MAX:
        raise InputError("a match's options from a player's phone are at most {kib} KiB (these: {size} bytes): "
                         "an organiser gives a whole board or map", "$.options", kib=PLAYER_OPTIONS_MAX // 1024,
                         size=size)


# -- seeing ---------------------------------------------------------------------------------------
def has_secrets(module) -> bool:
    return hasattr(module, "public_view") or hasattr(module, "public_event")


def view_for(module, view: dict, caller: Caller) -> dict:
    """A match's view as ``caller`` sees it: organisers everything; others the game's
    ``public_view(state, viewer)`` when it has one, and its ``public_summary(summary, state, viewer)`` (a
    summary that would tell a secret) when it has one."""
    if caller.organiser:
        return view
    pv = getattr(module, "public_view", None)
    if pv is None:
        return view
    out = {**view, "state": pv(view["state"], caller.seat)}
    ps = getattr(module, "public_summary", None)
    if ps is not None and isinstance(view.get("summary"), dict):
        out["summary"] = ps(view["summary"], view["state"], caller.seat)
    return out


def event_for(module, event: dict, caller: Caller, ended: bool = False) -> dict:
    """An event as ``caller`` sees it: organisers every event; others the game's ``public_event(event,
    viewer)`` when it has one (``None`` from it hides the event's data). A game with ``public_view`` and no
    ``public_event`` hides the data of its ``SECRET_EVENT_TYPES`` from everyone but the event's own player.
    After the end every event is shown whole (the end turns every secret face up)."""
    if caller.organiser or ended:
        return event
    pe = getattr(module, "public_event", None)
    if pe is not None:
        shown = pe(event, caller.seat)
    elif getattr(module, "public_view", None) is not None:
        secret = getattr(module, "SECRET_EVENT_TYPES", DEFAULT_SECRET_EVENT_TYPES)
        if event["type"] in secret and (caller.seat is None or _owner(event.get("data")) != caller.seat):
            shown = None
        else:
            shown = event
    else:
        shown = event
    if shown is None:
        owner = _owner(event.get("data"))
        return {"seq": event["seq"], "type": event["type"], "at": event["at"],
                "data": {"player": owner} if owner is not None else {}, "hidden": True}
    return shown


def sees_secret_of(caller: Caller, owner: str | None, ended: bool = False) -> bool:
    """Whether ``caller`` may be told ``owner``'s secret (a hand of cards, an objective, a refusal that
    names one): the owner's own seat, an organiser, or anyone once the match has ended."""
    return caller.organiser or ended or (owner is not None and caller.seat == owner)


def check_secret_refusal(module, caller: Caller, owner: str | None, exc: RuleError, ended: bool = False) -> None:
    """A refusal of a question about ``owner``'s secret (a trade of cards in the reinforcement calculator):
    raises it as it is for whom may be told the secret, else :func:`quiet_refusal` when its sentence could
    tell it (the game's ``SECRET_REFUSAL_TEMPLATES``); else returns (the caller raises ``exc``)."""
    if sees_secret_of(caller, owner, ended) or owner is None:
        return
    if exc.template in getattr(module, "SECRET_REFUSAL_TEMPLATES", frozenset()):
        raise quiet_refusal(owner) from None


def check_ranking(module, caller: Caller, ended: bool) -> None:
    """A game whose ranking before the end would reveal secrets (its points count the secret objectives:
    ``has_secrets``) shows it to organisers alone until the match ends."""
    if caller.organiser or ended or not has_secrets(module):
        return
    raise RuleError("the ranking is shown when the match ends (it would reveal the secret objectives)", "$")


def may_export(module, caller: Caller, ended: bool) -> bool:
    """A match's whole log (every secret in it): anyone's once it ended or when the game has no secrets,
    else the organisers' alone."""
    return caller.organiser or ended or not has_secrets(module)
