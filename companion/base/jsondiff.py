"""A JSON document's change as a short list of operations, and its application: what a live stream sends of
a match's view instead of the whole view (``companion/web/streams.py``; the pages apply it in
``web/static/js/companion.js``, ``applyPatch``, the same rules).

A patch is a list of operations, in order, each ``[path, value]`` (the value at ``path`` becomes ``value``)
or ``[path]`` (the key at ``path`` is removed from its object). A path is a list of an object's keys
(strings) and an array's indices (whole numbers); ``[]`` is the whole document. An index one past an
array's end appends to it. Unlike a JSON merge patch (RFC 7396) it can set a value to ``null`` and tell a
key removed from a key set to ``null``, so applying ``diff(old, new)`` to ``old`` gives exactly ``new``.

Objects are compared key by key, arrays of the same length (or grown at their end) index by index, any
other change (a type, a shorter array) replaces the value whole. ``true`` and ``1`` differ (JSON's types,
not Python's equality).
"""

from __future__ import annotations

_SEQ = (list, tuple)


def diff(old, new) -> list:
    """The operations that turn ``old`` into ``new`` (both plain JSON values); ``[]`` when they are equal."""
    out: list = []
    _diff(old, new, [], out)
    return out


def _diff(old, new, path: list, out: list) -> None:
    if old is new:
        return
    to, tn = type(old), type(new)
    if to is dict and tn is dict:
        for k, v in new.items():
            if k in old:
                o = old[k]
                if o is not v:
                    path.append(k)
                    _diff(o, v, path, out)
                    path.pop()
            else:
                out.append([[*path, k], v])
        for k in old:
            if k not in new:
                out.append([[*path, k]])
        return
    if to in _SEQ and tn in _SEQ and len(old) <= len(new):
        n = len(old)
        for i in range(n):
            o, v = old[i], new[i]
            if o is not v:
                path.append(i)
                _diff(o, v, path, out)
                path.pop()
        for i in range(n, len(new)):
            out.append([[*path, i], new[i]])
        return
    if to is tn and old == new:
        return
    out.append([list(path), new])


class PatchError(ValueError):
    """A patch that does not apply to the document (a path that is not there)."""


def apply(doc, ops: list):
    """``doc`` with ``ops`` applied; ``doc`` itself is not changed (what the patch touches is copied, the
    rest shared with it, as the page does)."""
    fresh: set = set()  # ids of the containers copied for this patch
    root = [doc]
    for op in ops:
        path = op[0]
        if not path:
            if len(op) < 2:
                raise PatchError("the whole document cannot be removed")
            root[0] = op[1]
            continue
        node, key = root, 0
        for k in path:
            node = _own(node, key, fresh)
            key = k
        if isinstance(node, dict) and type(key) in (str, int):
            if len(op) >= 2:
                node[str(key)] = op[1]
            elif str(key) in node:
                del node[str(key)]
            else:
                raise PatchError(f"nothing to remove at {path!r}")
        elif isinstance(node, list) and type(key) is int and 0 <= key <= len(node) and len(op) >= 2:
            if key == len(node):
                node.append(op[1])
            else:
                node[key] = op[1]
        else:
            raise PatchError(f"no place {path!r}")
    return root[0]


def _own(parent, key, fresh: set):
    """``parent[key]``, copied once for this patch (into ``parent``, itself a copy)."""
    child = _child(parent, key)
    if not isinstance(child, (dict, list)):
        raise PatchError(f"{key!r} holds no object or array")
    if id(child) not in fresh:
        child = dict(child) if isinstance(child, dict) else list(child)
        if isinstance(parent, dict):
            parent[str(key)] = child
        else:
            parent[key] = child
        fresh.add(id(child))
    return child


def _child(node, key):
    if isinstance(node, dict) and type(key) in (str, int) and str(key) in node:
        return node[str(key)]
    if isinstance(node, list) and type(key) is int and 0 <= key < len(node):
        return node[key]
    raise PatchError(f"no {key!r} in the document")
