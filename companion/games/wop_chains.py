"""Web of Power chains: the exact best set of disjoint monastery chains of one player.

A chain is a simple path of at least ``MIN_CHAIN`` (4) of one player's monasteries along roads
(borders don't matter); each monastery counts in one chain at most, and the player scores the
number of monasteries in their chains. The player may choose the chains, so the score is the
largest total number of vertices over all sets of vertex-disjoint simple paths of >= 4 vertices
in the player's induced road subgraph. (A branch never extends a chain, but a branch of 4 or more
monasteries may be a second chain; the search finds the best decomposition.)

The problem is NP-hard in general (it contains Hamiltonian path), but a player's subgraph is small
(at most 20 monasteries) and road graphs are sparse, so an exact branch and bound is quick:

- the subgraph is split into connected components, each solved on its own (memoised by vertex
  bitmask); a component of fewer than 4 vertices scores nothing;
- in a component, take a vertex ``v`` of least degree: either ``v`` is in no chain, or it lies on
  some simple path of >= 4 vertices; every such path is tried (longest first) and the rest of the
  component, which falls apart into smaller components, is solved recursively;
- an upper bound per component of >= 4 vertices (the smaller of: its size less the leaves that
  can't all be covered, a vertex with k leaf neighbours carrying at most one of them in a chain of
  >= 4; and an independent-set bound, see ``bound_independent``) cuts branches and stops as soon
  as a component is covered as well as the bound allows.
"""

from __future__ import annotations

MIN_CHAIN = 4
SEARCH_BUDGET = 100_000  # search steps (~0.4 s here); 300 synthetic map-like clusters of 20 needed <= 1636


class SearchTooLong(Exception):
    """The exact search went past its budget (a dense, non-map-like road graph)."""

    def __init__(self, steps: int):
        super().__init__(f"more than {steps - 1} search steps")
        self.steps = steps


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class _Solver:
    def __init__(self, n: int, adj: list[int], min_len: int, budget: int | None = None):
        self.n = n
        self.adj = adj
        self.min_len = min_len
        self.memo: dict[int, tuple[int, tuple]] = {}
        self.budget = budget
        self.steps = 0

    # -- components and bounds ------------------------------------------------------------
    def components(self, mask: int) -> list[int]:
        out = []
        adj = self.adj
        while mask:
            seed = mask & -mask
            comp = seed
            frontier = seed
            while frontier:
                low = frontier & -frontier
                frontier ^= low
                new = adj[low.bit_length() - 1] & mask & ~comp
                comp |= new
                frontier |= new
            out.append(comp)
            mask &= ~comp
        return out

    def bound_connected(self, comp: int) -> int:
        size = comp.bit_count()
        if size < self.min_len:
            return 0
        adj = self.adj
        lost = 0
        # leaves (degree 1 in comp) end their chain, which runs through their one neighbour u; a
        # chain with two leaves of u would be leaf-u-leaf, too short: u carries one leaf at most
        leaf_of: dict[int, int] = {}
        for v in _bits(comp):
            nb = adj[v] & comp
            if nb and nb & (nb - 1) == 0:
                u = nb.bit_length() - 1
                leaf_of[u] = leaf_of.get(u, 0) + 1
        carry = 1 if self.min_len > 3 else 2
        for u, k in leaf_of.items():
            if k > carry:
                lost += k - carry
        bound = min(size - lost, self.bound_independent(comp))
        # a chain has >= min_len vertices: covering fewer than that means covering none
        return bound if bound >= self.min_len else 0

    def bound_independent(self, comp: int) -> int:
        """For an independent set I (greedy, least degree first) with m = |comp - I| other vertices:
        two vertices of I are never consecutive on a path, so a chain holds at most one more vertex
        of I than of the others, and a chain of >= 4 holds >= 2 others. So the chains hold at most
        m others and min(|I|, m + m // 2) of I. (Tight on dense bipartite road graphs, where the
        leaf bound is far off and the search would otherwise take minutes.)"""
        adj = self.adj
        rest = comp
        size_i = 0
        while rest:
            v = min(_bits(rest), key=lambda x: (adj[x] & rest).bit_count())
            size_i += 1
            rest &= ~((1 << v) | adj[v])
        m = comp.bit_count() - size_i
        return m + min(size_i, m + m // 2)

    def bound(self, mask: int) -> int:
        return sum(self.bound_connected(c) for c in self.components(mask))

    # -- search ---------------------------------------------------------------------------
    def value(self, mask: int) -> tuple[int, tuple]:
        total = 0
        paths: tuple = ()
        for comp in self.components(mask):
            if comp.bit_count() < self.min_len:
                continue
            s, p = self.solve_connected(comp)
            total += s
            paths += p
        return total, paths

    def _path_sets(self, v: int, comp: int):
        """Vertex sets (bitmask, one path order) of the simple paths through ``v`` in ``comp``, each set once.

        A path through ``v`` is grown from ``v`` one side at a time (phase 0), then from ``v`` the
        other way (phase 1). What can still be reached depends only on (used set, end, phase), so
        each such state is expanded once: far fewer states than paths. Sets come longest-first
        along each branch (post-order), which finds good decompositions early."""
        adj = self.adj
        seen_states = set()
        seen_sets = set()
        vbit = 1 << v

        def rec(used: int, end: int, phase: int, a: tuple, b: tuple):
            # a: the first side from v (v first), b: the second side from v (v first)
            key = (used, end, phase)
            if key in seen_states:
                return
            seen_states.add(key)
            self.steps += 1
            if self.budget is not None and self.steps > self.budget:
                raise SearchTooLong(self.steps)
            free = comp & ~used
            for nxt in _bits(adj[end] & free):
                if phase == 0:
                    yield from rec(used | (1 << nxt), nxt, 0, a + (nxt,), b)
                else:
                    yield from rec(used | (1 << nxt), nxt, 1, a, b + (nxt,))
            if phase == 0 and used != vbit:
                yield from rec(used, v, 1, a, (v,))
            if used not in seen_sets:
                seen_sets.add(used)
                yield used, b[:0:-1] + a

        yield from rec(vbit, v, 0, (v,), ())

    def solve_connected(self, comp: int) -> tuple[int, tuple]:
        hit = self.memo.get(comp)
        if hit is not None:
            return hit
        ub = self.bound_connected(comp)
        best = (0, ())
        if ub == 0:
            self.memo[comp] = best
            return best
        adj = self.adj
        # branch on a vertex of least degree (a leaf can only be a path's end)
        v = min(_bits(comp), key=lambda x: ((adj[x] & comp).bit_count(), x))
        vbit = 1 << v
        others = comp & ~vbit
        min_len = self.min_len
        done = False
        for pmask, path in self._path_sets(v, comp):
            length = pmask.bit_count()
            if length < min_len:
                continue
            rest = comp & ~pmask
            if length + self.bound(rest) <= best[0]:
                continue
            s, p = self.value(rest)
            if length + s > best[0]:
                best = (length + s, (path,) + p)
                if best[0] >= ub:
                    done = True
                    break
        if not done and self.bound(others) > best[0]:
            s, p = self.value(others)
            if s > best[0]:
                best = (s, p)
        self.memo[comp] = best
        return best


def best_chains(vertices, edges, min_len: int = MIN_CHAIN, budget: int | None = None) -> tuple[int, list[list]]:
    """The best decomposition of the graph (``vertices``, ``edges`` as pairs; edges with an end
    outside ``vertices`` are ignored) into vertex-disjoint simple paths of >= ``min_len`` vertices.

    Returns ``(total vertices covered, chains)``; each chain is a list of vertices in path order.
    Deterministic for the same input order. With ``budget``, raises ``SearchTooLong`` after that
    many search steps instead of running for minutes (only dense, non-map-like road graphs get there).
    """
    verts = list(dict.fromkeys(vertices))
    index = {v: i for i, v in enumerate(verts)}
    adj = [0] * len(verts)
    for a, b in edges:
        ia, ib = index.get(a), index.get(b)
        if ia is None or ib is None or ia == ib:
            continue
        adj[ia] |= 1 << ib
        adj[ib] |= 1 << ia
    solver = _Solver(len(verts), adj, min_len, budget)
    total, paths = solver.value((1 << len(verts)) - 1)
    chains = [[verts[i] for i in p] for p in paths]
    return total, chains
