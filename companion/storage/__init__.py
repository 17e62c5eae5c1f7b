"""Storage: the only place SQL lives. One SQLite file, one writer (:meth:`Store.write`).

``Store`` is the database (:mod:`.db`: connections, the write path, migrations, settings, backups)
with the rows of each part of the app: matches and their event log (:mod:`.matches`), clock
checkpoints (:mod:`.clock`), sign-in (:mod:`.access`), Web of Power boards (:mod:`.boards`). The rows of
clubs, seasons and their results (:mod:`.seasons`), of the club roster (:mod:`.players`) and of tournament
days (:mod:`.tournaments`) are functions of a Store. Storage imports only ``companion.base``: the rules
over these rows are the services'.
"""

from __future__ import annotations

from companion.storage.access import AccessRows
from companion.storage.boards import BoardRows
from companion.storage.clock import ClockRows
from companion.storage.db import PRAGMAS, Database, connect, is_disk_full, migrations, new_id
from companion.storage.matches import MatchRows

__all__ = ["Store", "Database", "connect", "migrations", "new_id", "is_disk_full", "PRAGMAS"]


class Store(MatchRows, ClockRows, AccessRows, BoardRows, Database):
    """The database of one box."""
