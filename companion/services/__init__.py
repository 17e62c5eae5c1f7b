"""The services: the one write path of a match (``matches``), who may do what (``access``), seasons,
boards, tournaments, the league's boxes, replication and the live clock. They call the core for the
rules and ``companion.storage`` for the rows; the adapters (web, CLI, GPIO) call them."""
