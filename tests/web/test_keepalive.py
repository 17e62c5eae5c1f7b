"""Keep-alive connections of the real HTTP server (uvicorn as ``companion serve`` builds it, run in this
process on a loopback port): every accepted socket has ``TCP_NODELAY``.

Without it a response written in two parts (its head, then its body) waits, from the second request on a
connection, for the client's delayed ACK of the first part: ~40 ms for every keep-alive request of a
phone. The test does not time that (timed tests are not allowed here): it asserts the cause, the socket
option on the server's side of the connection, after two requests were answered on that one connection.
"""

import http.client
import socket
import threading

import pytest

from companion.web import server as http_server
from companion.web.asgi import Limits


@pytest.fixture
def running(app):
    sock = http_server.bind("127.0.0.1", 0)
    server, front = http_server.build(app, Limits(), threads=2)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(1000):  # started once it has installed its servers (no sleep-and-hope)
        if server.started:
            break
        thread.join(0.01)
    assert server.started
    yield sock.getsockname()[1], front
    server.should_exit = True
    thread.join(15)
    sock.close()


def _server_side_sockets(front):
    return [proto.transport.get_extra_info("socket") for proto in list(front.connections.by_client.values())]


def test_the_listening_socket_says_tcp_so_asyncio_sets_nodelay_too():
    sock = http_server.bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_a_second_keep_alive_request_is_answered_on_a_socket_with_nodelay(running):
    port, front = running
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        for _ in range(2):  # the second request on the same connection is the one that stalled
            conn.request("GET", "/healthz")
            r = conn.getresponse()
            r.read()
            assert r.status == 200
            assert not r.will_close  # still the same keep-alive connection
        mine = conn.sock.getsockname()
        socks = _server_side_sockets(front)
        assert [s.getpeername() for s in socks] == [mine]  # one connection, accepted once
        assert socks[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        conn.close()


def test_nodelay_is_set_on_whatever_tcp_socket_the_listener_hands_over():
    class Transport:
        def __init__(self, sock):
            self.sock = sock

        def get_extra_info(self, name):
            return self.sock if name == "socket" else None

    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # proto 0: asyncio would leave Nagle on
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        assert plain.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
        assert http_server.nodelay(Transport(plain))
        assert plain.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        assert not http_server.nodelay(Transport(unix))  # not TCP: nothing to set, no error
        assert not http_server.nodelay(Transport(None))
    finally:
        plain.close()
        unix.close()
