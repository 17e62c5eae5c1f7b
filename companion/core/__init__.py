"""The pure core: the match fold, the clock fold, the season, the tournament, the league and the roster's
names. No I/O, no SQL, no adapter; it imports only ``companion.base`` and ``companion.games``."""
