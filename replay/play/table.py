"""A hand played by a person against bots (``paohuzi play``): the deal, the journal that keeps
every decision on disk as it is made, the play loop and the record of the finished hand.

A table in play is one file, ``DATA/play/TABLE.jsonl`` (:data:`PLAY_DIR`): a header line (the
rules, the deal's seed and dealer, every seat's policy — ``human:NAME`` for the person — and
the run the hand goes into), then one line per decision of the person (its step in the hand
and its action code), each written, flushed and fsynced before the hand goes on. The folder is
the store's own (:func:`play_folder_problem`: never a symlink out of it, never a special
file), and a table's file is data, never code: its seats name built-in policies only, and
one naming a ``module:Class`` plug-in is refused before anything is imported. The bots
play as in ``simulate`` (:func:`engine.play.play_hand`: each seat's generator derived from the
seed), so the journal's decisions replay the whole hand up to where it stopped: a killed
session loses at most the decision it was asking for, and ``--resume`` goes on from there.

The deal of the day (:func:`daily_seed`) comes from the store's secret
(``DATA/.daily-secret``, made once, mode 0600) and the date, by HMAC-SHA256: the same deal
for everyone who plays in that store that day, which no one can look up from the date. What
is shown before the hand is a commitment (:func:`commitment`: SHA-256 of
``paohuzi daily DATE SEED``); the seed is shown after the hand, to check against it.

A finished hand is written as a replay file (:func:`replay.replayer.replay_file.to_json`) and
brought in like any other (:func:`replay.record.importing.import_hands`: verified by the
rules, committed by the store's writer into a run of imported hands under its lock, so two
players writing into one run take turns); the table's file is removed once the hand is
stored.

>>> deal = Deal.new("hunan", (), 0, ("human:ann", "heuristic", "greedy"), seed=7)
>>> deal.human, deal.players
(0, 3)
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import hmac
import json
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.deck import shuffle_deck
from engine.errors import InvalidNotation, PaohuziError
from engine.play import Step, play_state
from engine.policies import PluginRefused, check_spec, load_policy, refuse_plugin
from engine.policies.search_policy import with_preset_rollout
from engine.policy import Policy
from engine.rules import RuleSet, find_rules
from engine.state import Game, State
from replay.replayer.views import SeenMoves
from replay.store.fsinfo import file_kind, link_target

#: The folder of the tables in play, in the store's folder (not a run: nothing reads it but
#: ``paohuzi play``).
PLAY_DIR = "play"
PLAY_FORMAT = "paohuzi-play"
PLAY_VERSION = 1
#: The default run of played hands.
DEFAULT_RUN = "play"
#: The store's secret the deal of the day is derived from (with the UTC date), in the store's
#: folder: 32 random bytes as 64 hex digits and a newline, made once, mode 0600.
DAILY_SECRET_NAME = ".daily-secret"
#: The text whose SHA-256 is the deal of the day's commitment (:func:`commitment`).
COMMITTED = "paohuzi daily {day} {seed}"
#: The largest seed (the deck's generator takes 64 bits).
MAX_SEED = (1 << 64) - 1
#: The largest table file read (a hand has well under 200 decisions).
MAX_TABLE_BYTES = 1 << 20
HUMAN_PREFIX = "human:"
#: The bots a person plays against unless told (one name: every other seat).
DEFAULT_OPPONENTS = "heuristic"
#: Set (to 1) in the dashboard's environment by ``paohuzi dashboard --play``: its Play page
#: may then write hands into the store; without it the dashboard only reads.
PLAY_ENV = "PAOHUZI_PLAY"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}\Z")


class TableError(PaohuziError):
    """A table file that cannot be resumed, or a deal that cannot be played."""


def check_player_name(name: str) -> str:
    if not _NAME_RE.match(name):
        raise InvalidNotation(
            f"player name {name!r}: letters, digits, '.', '_' or '-', at most 40, starting with"
            " a letter or digit"
        )
    return name


def daily_secret(root: str | Path, create: bool = True) -> bytes | None:
    """The store's secret of the deals of the day (``DATA/.daily-secret``): read, or made
    once when ``create`` (32 random bytes, written as hex to a file of mode 0600 that is put
    in place whole, so two players starting at once get the same one); None when there is
    none and ``create`` is false. :class:`TableError` (one line) for a file that is a
    symlink, not a regular file or not 64 hex digits: it is never replaced, since the deals
    already played came from it."""
    import secrets

    path = Path(root) / DAILY_SECRET_NAME
    shown = f"the store's daily secret {path}"
    for _ in range(2):
        try:
            return _read_secret(path, shown)
        except FileNotFoundError:
            if not create:
                return None
        tmp = path.with_name(f"{DAILY_SECRET_NAME}.tmp-{os.getpid()}")
        try:
            Path(root).mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(secrets.token_hex(32) + "\n")
                f.flush()
                os.fsync(f.fileno())
            with contextlib.suppress(FileExistsError):  # another player's came first: theirs
                os.link(tmp, path)
        except OSError as e:
            raise TableError(f"cannot make {shown}: {e.strerror or e}") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    raise TableError(f"cannot make {shown}")  # made and gone at once


def _read_secret(path: Path, shown: str) -> bytes:
    """The secret in ``path`` (FileNotFoundError when there is none)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as e:
        why = "is a symbolic link" if e.errno == errno.ELOOP else f"cannot be read ({e.strerror})"
        raise TableError(f"{shown} {why}") from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise TableError(f"{shown} is {file_kind(mode)}, not a regular file")
        text = f.read(200).strip()
    if not re.fullmatch(rb"[0-9a-f]{64}", text):
        raise TableError(
            f"{shown} is not 64 hex digits: restore it (the deals of the day came from it)"
        )
    return bytes.fromhex(text.decode())


def daily_seed(root: str | Path, day: _dt.date, create: bool = True) -> int | None:
    """The seed of the deal of ``day`` (UTC) in the store at ``root``: HMAC-SHA256 of the
    date under the store's secret (:func:`daily_secret`, made when ``create``), its first 8
    bytes. The same cards for everyone who plays in the store that day; None when the store
    has no secret and ``create`` is false (no deal of the day was ever dealt in it)."""
    secret = daily_secret(root, create)
    if secret is None:
        return None
    mac = hmac.new(secret, f"paohuzi-daily/{day.isoformat()}".encode(), hashlib.sha256)
    return int.from_bytes(mac.digest()[:8], "little")


def commitment(day: _dt.date | str, seed: int) -> str:
    """The deal of the day's commitment, shown before the hand: the SHA-256 (hex) of
    ``paohuzi daily DATE SEED``. After the hand the seed is shown, and anyone can check it:
    ``printf 'paohuzi daily %s %s' DATE SEED | sha256sum``.

    >>> commitment("2026-12-07", 42)[:16]
    '3675d4240b3e58a5'
    """
    day = day if isinstance(day, str) else day.isoformat()
    return hashlib.sha256(COMMITTED.format(day=day, seed=int(seed)).encode()).hexdigest()


def check_seed(seed: int, what: str = "--seed") -> int:
    """``seed`` if it is one the deck takes (0 … 2⁶⁴−1), else :class:`InvalidNotation`."""
    if not 0 <= seed <= MAX_SEED:
        raise InvalidNotation(f"{what} {seed}: a seed is a whole number 0 … 2^64-1")
    return seed


def today() -> _dt.date:
    return _dt.datetime.now(_dt.UTC).date()


@dataclass(frozen=True)
class Deal:
    """What a table plays: rules (preset and ``--set`` items), the deck's seed, the dealer,
    each seat's policy spec (the person's ``human:NAME``), the run it goes into, the day of
    a deal of the day."""

    preset: str
    sets: tuple[str, ...]
    seed: int
    dealer: int
    seats: tuple[str, ...]
    run: str = DEFAULT_RUN
    daily: str | None = None
    rules: RuleSet = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        rules = find_rules(self.preset).with_overrides(list(self.sets))
        object.__setattr__(self, "rules", rules)
        if len(self.seats) != rules.players:
            raise InvalidNotation(f"{len(self.seats)} seats for {rules.players} players")
        humans = [s for s in self.seats if s.startswith(HUMAN_PREFIX)]
        if len(humans) != 1:
            raise InvalidNotation("exactly one seat is the person's (human:NAME)")
        check_player_name(humans[0].removeprefix(HUMAN_PREFIX))
        for i, s in enumerate(self.seats):  # data, never code: checked before any import
            if not s.startswith(HUMAN_PREFIX):
                refuse_plugin(s, f"seat {i}", "a table plays built-in policies")
        check_seed(self.seed, "seed")
        if not 0 <= self.dealer < rules.players:
            raise InvalidNotation(f"dealer {self.dealer} out of range")
        if rules.players == 4 and self.human == (self.dealer + 2) % 4:
            raise InvalidNotation(
                f"seat {self.human} sits out this hand (坐醒, the dealer's opposite): choose another"
            )

    @classmethod
    def new(
        cls,
        preset: str,
        sets: Sequence[str],
        seat: int,
        seats: Sequence[str],
        seed: int,
        run: str = DEFAULT_RUN,
        daily: str | None = None,
    ) -> Deal:
        """A deal of ``seed``; ``seats`` every seat's spec in seat order; the dealer is seat 0
        (``seat``: only checked to be the person's)."""
        deal = cls(preset, tuple(sets), seed, 0, tuple(seats), run, daily)
        if deal.human != seat:
            raise InvalidNotation(f"seat {seat} is not the person's")
        return deal

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def human(self) -> int:
        return next(i for i, s in enumerate(self.seats) if s.startswith(HUMAN_PREFIX))

    @property
    def player(self) -> str:
        return self.seats[self.human].removeprefix(HUMAN_PREFIX)

    @property
    def deck(self) -> tuple[int, ...]:
        return shuffle_deck(self.seed)

    @property
    def seed_text(self) -> str:
        """The deal as it is shown before the hand ends: ``seed N``, or for a deal of the day
        ``deal of the day DATE, commitment HEX`` (its seed is shown only after the hand:
        :meth:`revealed`)."""
        if self.daily is None:
            return f"seed {self.seed}"
        return f"deal of the day {self.daily}, commitment {commitment(self.daily, self.seed)}"

    def revealed(self) -> str:
        """What is shown once the hand is over: the seed, and for a deal of the day how to
        check it against the commitment shown before the hand."""
        if self.daily is None:
            return f"seed {self.seed}"
        return (
            f"deal of the day {self.daily}: seed {self.seed} (check it:"
            f" printf '{COMMITTED.format(day='%s', seed='%s')}' {self.daily} {self.seed}"
            f" | sha256sum gives the commitment {commitment(self.daily, self.seed)})"
        )

    def bots(self) -> list[Policy | None]:
        """Every seat's policy, None for the person's (an unknown spec raises
        :class:`InvalidNotation` before anything is written; a ``module:Class`` is refused
        before it is imported)."""
        return [
            None if i == self.human else load_policy(s, plugins=False)
            for i, s in enumerate(self.seats)
        ]

    def initial_state(self) -> State:
        """The hand's state right after the deal (a hand won at the deal is already over)."""
        return Game(self.rules).new_initial_state(self.deck, self.dealer)

    def header(self) -> dict[str, Any]:
        return {
            "format": PLAY_FORMAT,
            "version": PLAY_VERSION,
            "rules": {"preset": self.preset, "set": list(self.sets)},
            "seed": self.seed,
            "dealer": self.dealer,
            "seats": list(self.seats),
            "run": self.run,
            "daily": self.daily,
        }

    @classmethod
    def from_header(cls, doc: Any, where: str) -> Deal:
        try:
            if doc.get("format") != PLAY_FORMAT or doc.get("version") != PLAY_VERSION:
                raise TableError(f"{where} is not a paohuzi table (version {PLAY_VERSION})")
            for i, s in enumerate(doc["seats"]):  # a file never chooses code to run
                if isinstance(s, str) and not s.startswith(HUMAN_PREFIX):
                    _check_bot(s, i, where)
            rules = doc["rules"]
            return cls(
                str(rules["preset"]),
                tuple(str(s) for s in rules["set"]),
                int(doc["seed"]),
                int(doc["dealer"]),
                tuple(str(s) for s in doc["seats"]),
                str(doc["run"]),
                None if doc.get("daily") is None else str(doc["daily"]),
            )
        except TableError:
            raise
        except (AttributeError, KeyError, TypeError, ValueError, PaohuziError) as e:
            raise TableError(f"{where}: not a table's header ({e})") from None


def _check_bot(spec: str, seat: int, where: str) -> None:
    """A bot named by a table's file: a built-in policy (:func:`engine.policies.check_spec`,
    nothing imported, no file read), else :class:`TableError` naming the file."""
    try:
        check_spec(spec)
    except PluginRefused:
        raise TableError(
            f"{where}: seat {seat}'s bot {spec[:80]!r} is a module:Class plug-in; a table's"
            " file names built-in policies only, and nothing was imported"
        ) from None
    except InvalidNotation as e:
        raise TableError(f"{where}: seat {seat}'s bot: {e}") from None


# ---------------------------------------------------------------------------------------------
# The journal
# ---------------------------------------------------------------------------------------------


def new_deal(
    preset: str,
    sets: Sequence[str],
    seat: int,
    opponents: str,
    seed: int | None,
    daily: bool,
    run: str,
    name: str,
    root: str | Path | None = None,
) -> Deal:
    """The deal a person asks for (``paohuzi play``'s options, the Play page's form): the
    bots ``opponents`` (comma-separated in seat order after the person's; one name: every
    other seat), a new random seed unless ``seed`` or ``daily`` (the deal of the day of the
    store at ``root``: :func:`daily_seed`; without ``root``, :meth:`Journal.create` deals
    it from the store it writes to) says. Every bot is loaded, so an unknown one fails
    (:class:`InvalidNotation`) before anything is written — a ``module:Class`` before it is
    imported; so do a bad preset, override, seat, seed, name or run name."""
    import secrets

    from replay.store.layout import check_run_name

    rules = find_rules(preset).with_overrides(list(sets))
    players = rules.players
    if not 0 <= seat < players:
        raise InvalidNotation(f"--seat {seat}: the seats are 0–{players - 1}")
    if daily and seed is not None:
        raise InvalidNotation("--daily and --seed: choose one")
    if seed is not None:
        check_seed(seed)
    bots = [b.strip() for b in opponents.split(",") if b.strip()] or [DEFAULT_OPPONENTS]
    for b in bots:
        refuse_plugin(b, "--opponents", "play's bots are built-in: a table's file names them")
    if len(bots) == 1:
        bots *= players - 1
    if len(bots) != players - 1:
        raise InvalidNotation(f"--opponents: {len(bots)} bots for {players - 1} seats")
    bots = [with_preset_rollout(b, rules) for b in bots]
    seats = [*bots[:seat], HUMAN_PREFIX + check_player_name(name), *bots[seat:]]
    day = today() if daily else None
    if day is not None:  # without the store: a stand-in, dealt by Journal.create
        seed = 0 if root is None else daily_seed(root, day)
    elif seed is None:
        seed = secrets.randbelow(1 << 62)
    assert seed is not None
    daily_text = None if day is None else day.isoformat()
    deal = Deal.new(preset, tuple(sets), seat, tuple(seats), seed, check_run_name(run), daily_text)
    deal.bots()
    return deal


def play_dir(root: str | Path) -> Path:
    return Path(root) / PLAY_DIR


def play_folder_problem(root: str | Path) -> str | None:
    """Why the folder of the tables in play (``DATA/play``) may not be read or written, or
    None (it is a folder of the store, or not there yet): a symbolic link (a store's files
    are its own: a link out of it is never followed), a regular file, a FIFO or another
    special file (``paohuzi doctor`` lists it)."""
    folder = play_dir(root)
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot read {folder}: {e.strerror or e}"
    if stat.S_ISLNK(st.st_mode):
        target = link_target(folder)
        return (
            f"the play folder {folder} is a symbolic link (to {target[:80]!r}); the tables in"
            " play must be a folder inside the store (paohuzi doctor lists it)"
        )
    if not stat.S_ISDIR(st.st_mode):
        return (
            f"{folder} is {file_kind(st.st_mode)}, not the folder of the tables in play"
            " (paohuzi doctor lists it)"
        )
    return None


def check_play_folder(root: str | Path) -> None:
    """:class:`TableError` with :func:`play_folder_problem`'s line, if there is one."""
    problem = play_folder_problem(root)
    if problem is not None:
        raise TableError(problem)


#: A table's name as :meth:`Journal.create` gives it (``STAMP-PLAYER-K``), and any name a
#: person may give ``--resume`` or ``--discard`` (a name in the folder, no path).
TABLE_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}\Z")
TABLE_SUFFIX = ".jsonl"


def table_path(root: str | Path, name: str) -> Path:
    """The file of the table ``name`` (as listed: ``STAMP-PLAYER-K``, with or without
    ``.jsonl``) in the store at ``root``; :class:`TableError` for a name that is no table's
    (a path, ``..``) or a table that is not there (naming the ones that are)."""
    check_play_folder(root)
    stem = name.removesuffix(TABLE_SUFFIX)
    if not TABLE_NAME_RE.match(stem):
        raise TableError(f"table {name[:80]!r}: a table's name, as listed (no path)")
    path = play_dir(root) / f"{stem}{TABLE_SUFFIX}"
    if not os.path.lexists(path):
        have = ", ".join(p.stem for p in open_tables(root)[-5:]) or "none"
        raise TableError(f"no table {name[:80]!r} in {play_dir(root)} (tables: {have})")
    return path


class Journal:
    """A table's file: the header, then the person's decisions ``(step, action)``, each on
    disk (fsynced) before the hand goes on."""

    def __init__(self, path: Path, deal: Deal, decisions: list[tuple[int, int]]) -> None:
        self.path, self.deal, self.decisions = path, deal, decisions

    @property
    def table(self) -> str:
        return self.path.stem

    @classmethod
    def create(cls, root: str | Path, deal: Deal) -> Journal:
        """A new table of ``deal`` in the store at ``root`` (its header on disk). A deal of
        the day is dealt here from the store's secret (:func:`daily_seed`), and its file,
        which holds the seed, is the player's alone (mode 0600). :class:`TableError` when
        ``DATA/play`` is no folder of the store (:func:`play_folder_problem`) or cannot be
        written."""
        import dataclasses

        check_play_folder(root)
        if deal.daily is not None:
            seed = daily_seed(root, _dt.date.fromisoformat(deal.daily))
            assert seed is not None  # made when missing
            deal = dataclasses.replace(deal, seed=seed)
        folder = play_dir(root)
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S")
        mode = 0o600 if deal.daily is not None else 0o644
        try:
            folder.mkdir(parents=True, exist_ok=True)
            dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            raise TableError(
                problem_or(root, f"cannot make the folder {folder}: {e.strerror or e}")
            ) from None
        try:
            for k in range(1000):
                name = f"{stamp}-{deal.player}-{k}{TABLE_SUFFIX}"
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                try:
                    fd = os.open(name, flags, mode, dir_fd=dfd)
                except FileExistsError:
                    continue
                except OSError as e:
                    raise TableError(
                        f"cannot write a table in {folder}: {e.strerror or e}"
                    ) from None
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(json.dumps(deal.header(), ensure_ascii=False) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                return cls(folder / name, deal, [])
        finally:
            os.close(dfd)
        raise TableError(f"cannot name a new table in {folder}")

    @classmethod
    def open(cls, path: Path, repair: bool = True) -> Journal:
        """A table's file read back; :class:`TableError` for one that is not a table's (a
        symlink or a special file is not read). A killed writer's cut last line is dropped,
        and with ``repair`` cut off the file (``paohuzi doctor`` reads without)."""
        from replay.store.fsinfo import read_at_most

        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            why = "it is a symbolic link" if e.errno == errno.ELOOP else e.strerror or str(e)
            raise TableError(f"cannot read the table {path}: {why}") from None
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise TableError(f"{path} is {file_kind(mode)}, not a table")
            raw = read_at_most(fd, MAX_TABLE_BYTES)
        except OSError as e:
            raise TableError(f"cannot read the table {path}: {e.strerror or e}") from None
        finally:
            os.close(fd)
        if len(raw) > MAX_TABLE_BYTES:
            raise TableError(f"{path}: larger than {MAX_TABLE_BYTES} bytes, not a table")
        if raw and not raw.endswith(b"\n"):  # a killed writer's last line: that decision is lost
            raw = raw[: raw.rfind(b"\n") + 1]
            try:
                if repair:
                    os.truncate(path, len(raw))  # the next decision starts on its own line
            except OSError as e:
                raise TableError(f"cannot repair the table {path}: {e.strerror or e}") from None
        lines = raw.decode("utf-8", errors="replace").split("\n")
        try:
            head = json.loads(lines[0])
        except ValueError:
            raise TableError(f"{path}: not a table (its first line is not JSON)") from None
        deal = Deal.from_header(head, str(path))
        decisions = []
        for i, line in enumerate(lines[1:], 2):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                decisions.append((int(d["step"]), int(d["action"])))
            except (ValueError, KeyError, TypeError):
                if i == len(lines) or not any(x.strip() for x in lines[i:]):
                    break  # the last line of a killed writer
                raise TableError(f"{path}:{i}: not a decision") from None
        return cls(path, deal, decisions)

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """Hold an exclusive ``flock`` on the table's file: one writer at a time (a terminal
        and a browser tab, or two tabs, on one table). :class:`TableError` when the file is
        gone: the hand was finished (and recorded) elsewhere."""
        return _locked(self.path)

    def append(self, step: int, action: int) -> None:
        """Write decision ``(step, action)`` (flushed, fsynced) — refused with
        :class:`TableError` if another writer added a decision since this journal read the
        file (the hand went on elsewhere: open it again)."""
        with self.locked():
            if len(Journal.open(self.path).decisions) != len(self.decisions):
                raise TableError(
                    f"table {self.table} was played on elsewhere (another tab or terminal):"
                    " open it again"
                )
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
            with os.fdopen(fd, "a", encoding="utf-8") as f:
                f.write(json.dumps({"step": step, "action": action}) + "\n")
                f.flush()
                os.fsync(f.fileno())
        self.decisions.append((step, action))

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """:meth:`Journal.locked` of the table's file ``path``."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise TableError(f"table {path.stem} is finished: its hand was recorded") from None
    except OSError as e:
        raise TableError(f"cannot open the table {path}: {e.strerror or e}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not path.exists():  # recorded (and removed) while this one waited
            raise TableError(f"table {path.stem} is finished: its hand was recorded")
        yield
    finally:
        os.close(fd)


def open_tables(root: str | Path) -> list[Path]:
    """The tables in play in the store at ``root``, the latest last: the regular files
    ``*.jsonl`` of its ``play`` folder (none when that is no folder of the store:
    :func:`play_folder_problem`)."""
    if play_folder_problem(root) is not None or not play_dir(root).is_dir():
        return []
    return sorted(
        p for p in play_dir(root).glob(f"*{TABLE_SUFFIX}") if p.is_file() and not p.is_symlink()
    )


def problem_or(root: str | Path, text: str) -> str:
    """:func:`play_folder_problem`'s line if there is one (a folder swapped meanwhile), else
    ``text``."""
    return play_folder_problem(root) or text


@dataclass(frozen=True)
class Broken:
    """A table's file that cannot be resumed, and why (one line)."""

    path: Path
    why: str

    @property
    def table(self) -> str:
        return self.path.stem


def resumable(root: str | Path, name: str | None = None) -> tuple[Journal, list[Broken]]:
    """The table ``--resume`` goes on with: the one named (:func:`table_path`; a broken one
    is an error), else the latest one that can be read, with the later ones that cannot
    (skipped, said by the caller). :class:`TableError` (one line) when there is none,
    naming the broken ones."""
    check_play_folder(root)
    if name is not None:
        path = table_path(root, name)
        try:
            return Journal.open(path), []
        except TableError as e:
            raise TableError(f"{e}; paohuzi play --discard {path.stem} removes it") from None
    broken: list[Broken] = []
    for path in reversed(open_tables(root)):
        try:
            return Journal.open(path), broken
        except TableError as e:
            broken.append(Broken(path, str(e)))
    if broken:
        names = ", ".join(b.table for b in broken[:5])
        raise TableError(
            f"no unfinished hand in {root} to resume: the tables {names} cannot be read"
            f" ({broken[0].why}); paohuzi play --discard TABLE removes one"
        )
    raise TableError(f"no unfinished hand in {root} to resume")


def discard(root: str | Path, name: str) -> Path:
    """Remove the table ``name`` (:func:`table_path`), sound or broken, as its player asks:
    under its lock, so a decision being written finishes first. Its file's path."""
    path = table_path(root, name)
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            with _locked(path):
                path.unlink()
        else:  # a symlink or a special file: the entry alone, never what it points to
            path.unlink()
    except FileNotFoundError:
        pass
    except OSError as e:
        raise TableError(f"cannot remove the table {path}: {e.strerror or e}") from None
    return path


# ---------------------------------------------------------------------------------------------
# Play
# ---------------------------------------------------------------------------------------------

#: Asks the person for a decision: (the state, the seat, the sorted legal actions) → action.
Ask = Callable[[State, int, Sequence[int]], int]


class _Person:
    """The person's seat as a policy: the journal's decisions first (a resumed hand), then
    ``ask``; each new decision is journalled before it is played."""

    def __init__(self, journal: Journal, ask: Ask, state: Callable[[], State]) -> None:
        self.name = journal.deal.seats[journal.deal.human]
        self.journal, self.ask, self.state = journal, ask, state
        self.replayed, self.to_replay = 0, len(journal.decisions)

    def act(self, observation: Any, legal_actions: Sequence[int], rng: Any) -> int:
        state = self.state()
        step = len(state.history)
        if self.replayed < self.to_replay:
            at, action = self.journal.decisions[self.replayed]
            if at != step or action not in legal_actions:
                raise TableError(
                    f"{self.journal.path}: decision {self.replayed + 1} (step {at}) does not"
                    f" fit the hand at step {step}: the table cannot be resumed"
                )
            self.replayed += 1
            return action
        action = self.ask(state, observation.seat, legal_actions)
        if action not in legal_actions:  # the asker's job; never journal an illegal move
            raise TableError(f"action {action} is not one of the legal options")
        self.journal.append(step, action)
        return action


#: A move as the person sees it: ``(seat, seen action, forced)`` (:class:`SeenMoves`).
Seen = tuple[int, dict[str, Any], bool]


def play(
    journal: Journal, ask: Ask, state: State | None = None, memo: BotMemo | None = None
) -> Iterator[tuple[Step, bool, list[Seen]]]:
    """Play the journal's hand from ``state`` (its :meth:`Deal.initial_state`, which the
    caller keeps: a hand won at the deal has no step; default a new one): every step, whether
    it is played now (``False``: it comes before the journal's last decision, a resumed
    hand's past), and the moves the person is shown after it (:class:`SeenMoves`): none in
    the past, nor the person's own journalled choice, but at that choice the others' claims
    it released. The bots' choices come from ``memo`` when given (:class:`BotMemo`). The
    last step's state holds the outcome."""
    deal = journal.deal
    state = deal.initial_state() if state is None else state
    person = _Person(journal, ask, lambda: state)
    seats = [person if p is None else p if memo is None else memo.wrap(i, p)
             for i, p in enumerate(deal.bots())]  # fmt: skip
    last = journal.decisions[-1][0] if journal.decisions else -1
    seen = SeenMoves(deal.human)
    for step in play_state(state, seats, deal.seed):
        shown = seen.add(state, step.seat, step.action, step.forced)
        at = len(state.history) - 1
        yield (
            step,
            at > last,
            [m for m in shown if at > last or (at == last and m[0] != deal.human)],
        )


# ---------------------------------------------------------------------------------------------
# A page's play: as far as the hand goes without the person
# ---------------------------------------------------------------------------------------------


class _Wait(Exception):  # noqa: N818 - control flow, never shown
    """The person is to act (among ``legal``) and the journal holds no decision for it."""

    def __init__(self, legal: Sequence[int]) -> None:
        self.legal = tuple(legal)


@dataclass
class Turn:
    """Where :func:`advance` stopped: the live state, the moves since the person's last
    journalled decision as the person sees them, and the person's legal options (empty when
    the hand is over)."""

    state: State
    since: list[Seen]
    legal: tuple[int, ...]

    @property
    def over(self) -> bool:
        return self.state.outcome is not None


def move_line(
    seat: int, seen: dict[str, Any], forced: bool, seats: Sequence[str], human: int
) -> str:
    """One move as the person is shown it: ``seat 1 (heuristic): 吃 [一二三]``,
    ``you: 提 [八八八八] (forced)``, ``seat 2 (greedy): 偎 (face down) (forced)``."""
    who = "you" if seat == human else f"seat {seat} ({seats[seat]})"
    return f"{who}: {seen['text']}{' (forced)' if forced else ''}"


class BotMemo:
    """The bots' choices of one table, kept between calls of :func:`advance` (a page plays
    the hand again from its journal at every click): the k-th choice of a seat and its
    generator's state after it. A remembered choice is given back and the generator set to
    where the bot left it, so the hand is the one a single pass plays, bot calls and all —
    a search bot thinks once per decision, not once per click."""

    def __init__(self) -> None:
        self.choices: dict[int, list[tuple[int, Any]]] = {}

    def wrap(self, seat: int, policy: Policy) -> Policy:
        memo = self.choices.setdefault(seat, [])
        calls = [0]

        class _Remembered:
            name = policy.name

            def act(self, observation: Any, legal_actions: Sequence[int], rng: Any) -> int:
                k = calls[0]
                calls[0] += 1
                if k < len(memo):
                    action, after = memo[k]
                    rng.setstate(after)
                    return int(action)
                action = policy.act(observation, legal_actions, rng)
                memo.append((action, rng.getstate()))
                return action

        return _Remembered()  # type: ignore[return-value]


def advance(journal: Journal, memo: BotMemo | None = None) -> Turn:
    """Play the journal's hand from its start as far as it goes without a new decision of
    the person (:func:`play`, stopped at the person's next question): the person's next
    options, or the end."""
    state = journal.deal.initial_state()

    def ask(st: State, seat: int, legal: Sequence[int]) -> int:
        raise _Wait(legal)

    since: list[Seen] = []
    try:
        for _, _, shown in play(journal, ask, state, memo):
            since.extend(shown)
    except _Wait as w:
        return Turn(state, since, w.legal)
    return Turn(state, since, ())


def record(root: str | Path, journal: Journal, state: State, lock_wait: float = 60.0) -> Any:
    """Bring the finished hand of ``journal`` (its final ``state``) into its run, as a replay
    file is brought in (verified by the rules, stored under the run's lock, waiting up to
    ``lock_wait`` s for another writer); then remove the table's file. The
    :class:`~replay.replayer.importing.ImportResult`; :class:`TableError` when the hand was
    refused (the table's file is kept)."""
    from replay.record.importing import import_hands
    from replay.replayer.hand import HandLog
    from replay.replayer.importing import ImportBatch, parse_item
    from replay.replayer.replay_file import to_json

    deal = journal.deal
    if state.outcome is None:
        raise TableError("the hand is not over")
    log = HandLog.from_history(deal.rules, deal.deck, deal.dealer, state.history)
    title = f"{deal.player} at table {journal.table} (seed {deal.seed})"
    text = to_json(log, title=title, policies=list(deal.seats))
    item = parse_item(text, journal.table)
    with journal.locked():  # one recorder per table: a second finds it gone, and says so
        result = import_hands(
            root,
            ImportBatch([item]),
            deal.run,
            ["paohuzi", "play"],
            allow_duplicate=True,  # two people may play a deal of the day alike
            lock_wait=lock_wait,
            origin="play",
        )
        verdict = result.verdicts[0]
        if not verdict.accepted:
            raise TableError(f"the hand was not stored: {verdict.error}")
        journal.remove()
    return result


# ---------------------------------------------------------------------------------------------
# The same deal, played by the bots in the person's seat
# ---------------------------------------------------------------------------------------------


def compare_bots(preset: str) -> list[str]:
    """The bots a hand is compared with by default: ``heuristic``, the shipped tuned set of
    the preset when there is one (``heuristic@tuned-PRESET``), ``search@64`` (with its
    preset's rollouts, :func:`duplicate_scores`)."""
    bots = ["heuristic"]
    with contextlib.suppress(PaohuziError, OSError, ValueError):
        load_policy(f"heuristic@tuned-{preset}")
        bots.append(f"heuristic@tuned-{preset}")
    return [*bots, "search@64"]


#: The most bots a hand is compared with, and the longest spec (the manifest's limits,
#: replay.store.manifest_schema).
MAX_COMPARED = 16
MAX_SPEC = 1000


def bots_to_compare(compare: str | None, preset: str) -> list[str]:
    """The bots of ``--compare`` (comma-separated; None: :func:`compare_bots`; ``none``: no
    comparison), each loaded: an unknown one fails before the hand, a ``module:Class``
    before it is imported (the Play page's form gives these too)."""
    if compare is not None and compare.strip().lower() == "none":
        return []
    bots = compare_bots(preset) if compare is None else [b.strip() for b in compare.split(",")]
    bots = [b for b in bots if b]
    if len(bots) > MAX_COMPARED:
        raise InvalidNotation(f"--compare: {len(bots)} bots, at most {MAX_COMPARED}")
    for b in bots:
        if len(b) > MAX_SPEC:
            raise InvalidNotation(
                f"--compare: a bot spec of {len(b)} characters (at most {MAX_SPEC})"
            )
        refuse_plugin(b, "--compare", "play compares built-in policies")
    for b in bots:
        load_policy(b, plugins=False)
    return bots


def duplicate_scores(deal: Deal, bots: Sequence[str]) -> list[tuple[str, int]]:
    """Each bot's score in the person's seat on the same deal, the other seats' policies and
    every seed unchanged (duplicate, as bridge compares a deal across tables): compiled when
    every seat's policy is (:func:`engine.fast.play.play_batch`, the reference's very
    play), else by the reference engine; a bare ``search@N`` is named and played with its
    preset's rollouts (:func:`~engine.policies.search_policy.with_preset_rollout`). An
    unknown bot raises :class:`InvalidNotation`."""
    out = []
    for bot in bots:
        seats = list(deal.seats)
        seats[deal.human] = bot = with_preset_rollout(bot, deal.rules)
        out.append((bot, _score(deal, seats)))
    return out


def compare(root: str | Path, run: str, hand: int, deal: Deal, bots: Sequence[str]) -> Any:
    """:func:`duplicate_scores` of the recorded ``hand``, kept in its run's manifest
    (:mod:`replay.store.comparisons`, so ``paohuzi review`` and the dashboard show it again):
    the :class:`~replay.store.comparisons.Comparison`."""
    from replay.store.comparisons import store_comparison
    from replay.store.layout import run_dir

    scores = duplicate_scores(deal, bots)
    return store_comparison(run_dir(Path(root), run), hand, deal.human, scores)


def _score(deal: Deal, seats: list[str]) -> int:
    # an unknown spec fails here, in both engines; a plug-in is never imported
    policies = [load_policy(s, plugins=False) for s in seats]
    try:
        import numpy as np

        from engine.fast.play import play_batch

        _, hands = play_batch(
            deal.rules, np.array([deal.deck], dtype=np.uint8), [deal.dealer], [deal.seed], seats
        )
        return int(hands[f"delta_{deal.human}"][0])
    except (ImportError, InvalidNotation):  # numba missing, or a policy with no compiled twin
        from engine.play import play_to_end

        state = play_to_end(Game(deal.rules), deal.deck, deal.dealer, policies, deal.seed)
        assert state.outcome is not None
        return int(state.outcome.deltas[deal.human])


def review_played(root: str | Path, run: str, hand: int, seat: int) -> Any:
    """The person's decisions in the recorded ``hand`` valued by the review at its default
    budget (:mod:`replay.review.defaults`), stored in the run so ``paohuzi review`` and the
    Replay page read it again: the :class:`~engine.judge.HandReview`."""
    from replay import store
    from replay.replayer.hand import load_hand
    from replay.review.defaults import DEFAULT_ROLLOUT_POLICY, DEFAULT_ROLLOUTS
    from replay.review.hand import review_hand
    from replay.store import reviews as S

    st = store.open_store(root)
    log = load_hand(st, run, hand)
    result = review_hand(log, [seat], DEFAULT_ROLLOUTS, DEFAULT_ROLLOUT_POLICY, 0)
    key = S.Key(DEFAULT_ROLLOUTS, DEFAULT_ROLLOUT_POLICY, 0)
    S.store(st.run(run).path, key, [(hand, S.mask_of([seat]), result.decisions)])
    return result


@dataclass(frozen=True)
class Result:
    """One recorded hand of a deal: who played it (the ``human:`` seat), from which seat,
    their score, and the hand's id."""

    player: str
    seat: int
    score: int
    hand_id: int


def results(root: str | Path, run: str, deck: Sequence[int]) -> list[Result]:
    """The hands of ``deck`` recorded in run ``run`` (the deal of the day's results), in
    the order they were stored; none when the run is not there."""
    from replay.store.runs import open_store

    store = open_store(root)
    if run not in store.run_names():
        return []
    cols = ", ".join(f"policy_{s}, delta_{s}" for s in range(4))
    rows = (
        store.connect()
        .execute(
            f"SELECT hand_id, {cols} FROM hands WHERE run = $run AND deck = $deck ORDER BY hand_id",
            {"run": run, "deck": bytes(deck)},
        )
        .fetchall()
    )
    out = []
    for hand_id, *seats in rows:
        for s in range(4):
            policy, delta = seats[2 * s], seats[2 * s + 1]
            if isinstance(policy, str) and policy.startswith(HUMAN_PREFIX):
                out.append(Result(policy.removeprefix(HUMAN_PREFIX), s, int(delta), int(hand_id)))
    return out


def check_run(root: str | Path, deal: Deal) -> None:
    """Refuse, before the hand is played, a run the finished hand could not go into
    (:func:`~replay.replayer.importing.import_target`): one of simulated hands, or of
    imported hands of other rules (:class:`TableError`)."""
    from replay.replayer.importing import import_target
    from replay.replayer.replay_schema import ReplayFileError
    from replay.store.layout import run_dir

    try:
        manifest = import_target(run_dir(Path(root), deal.run), deal.run)
    except ReplayFileError:
        raise TableError(f"run {deal.run!r} holds simulated hands: choose another --run") from None
    if manifest is not None and manifest.get("rules_fingerprint") != deal.rules.fingerprint():
        raise TableError(
            f"run {deal.run!r} holds hands of other rules: choose another --run"
            f" (e.g. --run play-{deal.preset})"
        )
