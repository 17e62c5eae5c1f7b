"""The exact chain solver against the rule book's example and a brute force on small graphs."""

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games.wop_chains import best_chains


def brute_force(vertices, edges, min_len=4):
    """Independent formulation: list every simple path of >= min_len vertices, then the best
    packing of pairwise disjoint ones (plain exhaustive set packing)."""
    adj = {v: set() for v in vertices}
    for a, b in edges:
        if a != b and a in adj and b in adj:
            adj[a].add(b)
            adj[b].add(a)
    paths = set()

    def grow(path):
        if len(path) >= min_len:
            paths.add(frozenset(path))
        for n in adj[path[-1]]:
            if n not in path:
                grow(path + [n])

    for v in vertices:
        grow([v])
    sets = sorted(paths, key=len, reverse=True)
    best = 0

    def pack(i, used, total):
        nonlocal best
        best = max(best, total)
        for j in range(i, len(sets)):
            if not sets[j] & used:
                pack(j + 1, used | sets[j], total + len(sets[j]))

    pack(0, frozenset(), 0)
    return best


def assert_valid_chains(vertices, edges, total, chains, min_len=4):
    edge_set = {frozenset(e) for e in edges}
    seen = set()
    for chain in chains:
        assert len(chain) >= min_len
        assert len(set(chain)) == len(chain), "a chain repeats a monastery"
        for a, b in zip(chain, chain[1:]):
            assert frozenset((a, b)) in edge_set, f"no road {a}-{b}"
        assert not seen & set(chain), "a monastery counts in two chains"
        seen |= set(chain)
    assert seen <= set(vertices)
    assert total == sum(len(c) for c in chains)


def test_rule_book_branch_example():
    # Chris: a chain of 5 through Burgund and Italien; his monastery in Bayern branches off it.
    # Whatever the drawing's exact branch point, the best is one chain of 5 (not 4 + a second chain).
    chain = ["Burgund1", "Italien1", "Italien2", "Italien3", "Italien4"]
    edges = list(zip(chain, chain[1:]))
    for branch_at in chain[1:4]:
        total, chains = best_chains(chain + ["Bayern1"], edges + [(branch_at, "Bayern1")])
        assert total == 5
        assert len(chains) == 1 and len(chains[0]) == 5


def test_branch_of_four_is_a_second_chain():
    # a T with long arms: 9 monasteries, best is a 5-chain and a disjoint 4-chain (all 9)
    spine = list("abcde")
    arm = list("wxyz")
    edges = list(zip(spine, spine[1:])) + list(zip(arm, arm[1:])) + [("c", "w")]
    total, chains = best_chains(spine + arm, edges)
    assert total == 9
    assert_valid_chains(spine + arm, edges, total, chains)


def test_best_decomposition_beats_the_longest_chain():
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("c", "x"), ("x", "y"), ("y", "z"), ("z", "w")]
    verts = ["a", "b", "c", "d", "e", "x", "y", "z", "w"]
    total, chains = best_chains(verts, edges)
    # the longest chain a-b-c-x-y-z-w (7) strands d, e; a-b-c-d-e (5) + x-y-z-w (4) = 9
    assert total == 9
    assert_valid_chains(verts, edges, total, chains)


def test_edge_cases():
    assert best_chains([], []) == (0, [])
    assert best_chains(["a", "b", "c"], [("a", "b"), ("b", "c")]) == (0, [])
    # a star of 4: longest path has 3 vertices
    assert best_chains("cabd", [("c", "a"), ("c", "b"), ("c", "d")])[0] == 0
    # exactly four in a row, given in any order; roads to sites of others are ignored
    total, chains = best_chains(["d", "b", "a", "c"], [("a", "b"), ("b", "c"), ("c", "d"), ("d", "zz")])
    assert total == 4 and sorted(chains[0]) == ["a", "b", "c", "d"]
    # a cycle of 4 is a chain of 4; duplicates and self-loops are harmless
    total, _ = best_chains("abcd", [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("a", "a"), ("b", "a")])
    assert total == 4
    # two separate rows of 4 and 3
    total, _ = best_chains("abcdxyz", [("a", "b"), ("b", "c"), ("c", "d"), ("x", "y"), ("y", "z")])
    assert total == 4


def test_twenty_in_a_row_and_a_grid():
    row = [f"s{i}" for i in range(20)]
    total, chains = best_chains(row, list(zip(row, row[1:])))
    assert total == 20 and len(chains) == 1
    grid = [(x, y) for x in range(5) for y in range(4)]
    edges = [((x, y), (x + 1, y)) for x in range(4) for y in range(4)] + \
            [((x, y), (x, y + 1)) for x in range(5) for y in range(3)]
    total, chains = best_chains(grid, edges)
    assert total == 20
    assert_valid_chains(grid, edges, total, chains)


@st.composite
def small_graphs(draw):
    n = draw(st.integers(min_value=0, max_value=9))
    pairs = list(itertools.combinations(range(n), 2))
    if not pairs:
        return list(range(n)), []
    edges = draw(st.lists(st.sampled_from(pairs), max_size=min(14, len(pairs)), unique=True))
    return list(range(n)), edges


@settings(max_examples=400)
@given(small_graphs())
def test_solver_matches_brute_force(graph):
    vertices, edges = graph
    total, chains = best_chains(vertices, edges)
    assert total == brute_force(vertices, edges)
    assert_valid_chains(vertices, edges, total, chains)


@settings(max_examples=100)
@given(small_graphs(), st.randoms(use_true_random=False))
def test_result_does_not_depend_on_order(graph, rnd):
    vertices, edges = graph
    shuffled_v = list(vertices)
    rnd.shuffle(shuffled_v)
    shuffled_e = [tuple(reversed(e)) if rnd.random() < 0.5 else e for e in edges]
    rnd.shuffle(shuffled_e)
    assert best_chains(shuffled_v, shuffled_e)[0] == best_chains(vertices, edges)[0]


@st.composite
def trees_and_cycles(draw):
    """Bigger sparse graphs (up to 12 vertices): a random tree plus a few extra roads."""
    n = draw(st.integers(min_value=4, max_value=12))
    edges = [(i, draw(st.integers(min_value=0, max_value=i - 1))) for i in range(1, n)]
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3))
    return list(range(n)), edges + [e for e in extra if e[0] != e[1]]


@settings(max_examples=150)
@given(trees_and_cycles())
def test_solver_matches_brute_force_on_sparse_graphs(graph):
    vertices, edges = graph
    total, chains = best_chains(vertices, edges)
    assert total == brute_force(vertices, edges)
    assert_valid_chains(vertices, edges, total, chains)
