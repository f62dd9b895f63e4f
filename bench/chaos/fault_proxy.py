"""A fault-injecting HTTP/1.1 proxy on loopback, for chaos runs between a Hub client and
`kernelhub serve` (stdlib only).

It listens on two ports, one for the Hub's public URL and one for its storage URL (start the server
with `--public-url` / `--storage-url` pointing here), forwards each request on a fresh upstream
connection with `Connection: close`, and with probability `fault_rate` applies one scripted fault:

  reset          RST the client connection before answering
  reset_mid      RST after part of the response body
  stall          hold the response for `stall_s` seconds before the head (past the client's timeout
                 when stall_s is larger), then answer normally
  hang           read the request and never answer (the connection is closed after `hang_s`)
  stall_mid      the same, in the middle of the body
  status_5xx     answer 500/502/503 without asking upstream, for a burst of 1-3 requests
  status_429     answer 429 with `Retry-After: 1` for a burst of 1-3 requests
  truncate       close (FIN) after part of the body; Content-Length still promises all of it
  corrupt        flip one byte of the body
  redirect_hop   answer 307 to /__chaos/hop on the same host, which redirects to the original
                 target (an extra, reordered hop in the redirect chain)
  redirect_cross a 307 hop through the *other* host (Hub <-> storage)

Refusals: with `down_every` set, both listening sockets close for the last `down_for` seconds of
every `down_every`, counted from when faults are enabled (the Hub is down: connections are
refused, as at a closed port), then open again on the same ports. A run starts with the Hub up.

Every decision comes from one seeded random.Random, so a run is reproducible up to thread timing.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
import time
import urllib.parse
from collections import Counter

FAULTS = ("reset", "reset_mid", "stall", "stall_mid", "status_5xx", "status_429", "truncate", "corrupt",
          "redirect_hop", "redirect_cross", "hang")
_MAX_HEAD = 64 * 1024


def _read_head(sock: socket.socket, buffered: bytes = b"") -> tuple[bytes, bytes] | None:
    """(head up to and including CRLFCRLF, bytes after it), or None when the peer closed first."""
    data = buffered
    while b"\r\n\r\n" not in data:
        if len(data) > _MAX_HEAD:
            return None
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    end = data.index(b"\r\n\r\n") + 4
    return data[:end], data[end:]


def _headers(head: bytes) -> tuple[str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    out = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            out[name.strip().lower()] = value.strip()
    return lines[0], out


def _reset(sock: socket.socket) -> None:
    """Close with RST instead of FIN (SO_LINGER with a zero timeout)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        sock.close()


class FaultProxy:
    def __init__(self, seed: int = 0, fault_rate: float = 0.3, faults: tuple[str, ...] = FAULTS,
                 stall_s: float = 3.0, targets: tuple[str, ...] = ("/",), max_faults: int | None = None,
                 hang_s: float = 30.0, down_every: float | None = None, down_for: float = 0.0):
        self.fault_rate = fault_rate
        self.targets = targets  # only requests whose target starts with one of these are faulted
        self.max_faults = max_faults  # None: no limit
        self.faults = faults
        self.stall_s = stall_s
        self.hang_s = hang_s
        self.down_every = down_every
        self.down_for = down_for
        self.down_windows = 0  # how many times the listeners closed
        self._enabled = False
        self.upstream_port: int | None = None
        self.counts: Counter = Counter()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._burst: list = []  # [kind, remaining]
        self._stop = threading.Event()
        self._listeners = []
        self.ports = []
        for _ in range(2):
            listener = self._listen(0)
            self._listeners.append(listener)
            self.ports.append(listener.getsockname()[1])
        # The Hub answers on 127.0.0.1 and storage on localhost: two origins, as the server requires.
        self.hub_url = f"http://127.0.0.1:{self.ports[0]}"
        self.storage_url = f"http://localhost:{self.ports[1]}"
        self._threads = [threading.Thread(target=self._accept, args=(l, i), daemon=True)
                         for i, l in enumerate(self._listeners)]

    @staticmethod
    def _listen(port: int) -> socket.socket:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(256)
        listener.settimeout(0.2)
        return listener

    @property
    def enabled(self) -> bool:
        return self._enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        if value and not self._enabled:
            self._started = time.monotonic()  # the down windows count from here
        self._enabled = value

    def start(self) -> "FaultProxy":
        self._started = time.monotonic()
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()
        for listener in self._listeners:
            if listener is not None:
                listener.close()

    def _down_now(self) -> bool:
        if not self.enabled or not self.down_every:
            return False
        return (time.monotonic() - self._started) % self.down_every >= self.down_every - self.down_for

    def _accept(self, listener: socket.socket, index: int) -> None:
        while not self._stop.is_set():
            if self._down_now():
                if self._listeners[index] is not None:  # the Hub goes down: its port refuses
                    self._listeners[index].close()
                    self._listeners[index] = None
                    if index == 0:
                        with self._lock:
                            self.down_windows += 1
                time.sleep(0.05)
                continue
            if self._listeners[index] is None:
                try:
                    self._listeners[index] = self._listen(self.ports[index])
                except OSError:
                    time.sleep(0.05)
                    continue
            try:
                conn, _ = self._listeners[index].accept()
            except (socket.timeout, OSError):
                continue
            threading.Thread(target=self._serve, args=(conn, index), daemon=True).start()

    def _choose(self, target: str) -> tuple[str | None, float]:
        """The fault for the next request and where in the body it strikes (a fraction)."""
        with self._lock:
            if not self.enabled or not target.startswith(self.targets):
                return None, 0.0
            if self.max_faults is not None and sum(self.counts.values()) >= self.max_faults:
                return None, 0.0
            if self._burst:
                kind = self._burst[0]
                self._burst[1] -= 1
                if self._burst[1] <= 0:
                    self._burst = []
                return kind, 0.0
            if self._rng.random() >= self.fault_rate:
                return None, 0.0
            kind = self._rng.choice(self.faults)
            if kind in ("status_5xx", "status_429"):
                self._burst = [kind, self._rng.randint(0, 2)] if self._rng.random() < 0.5 else []
                if self._burst and self._burst[1] == 0:
                    self._burst = []
            return kind, self._rng.random()

    def _serve(self, client: socket.socket, index: int) -> None:
        client.settimeout(60)
        try:
            got = _read_head(client)
            if got is None:
                client.close()
                return
            head, rest = got
            request_line, headers = _headers(head)
            method, target, _ = request_line.split(" ", 2)
            length = int(headers.get("content-length", "0") or 0)
            while len(rest) < length:
                chunk = client.recv(min(1 << 20, length - len(rest)))
                if not chunk:
                    client.close()
                    return
                rest += chunk
            body = rest[:length]
            if target.startswith("/__chaos/hop?"):
                to = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query)["to"][0]
                self._answer(client, 307, [("Location", to)])
                return
            fault, where = self._choose(target)
            if fault:
                with self._lock:
                    self.counts[fault] += 1
            self._apply(client, index, method, target, head, body, fault, where)
        except (OSError, ValueError):
            try:
                client.close()
            except OSError:
                pass

    def _answer(self, client: socket.socket, status: int, headers: list, body: bytes = b"") -> None:
        reason = {307: "Temporary Redirect", 429: "Too Many Requests", 500: "Internal Server Error",
                  502: "Bad Gateway", 503: "Service Unavailable"}.get(status, "Status")
        lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers),
                 f"Content-Length: {len(body)}", "Connection: close", "", ""]
        client.sendall("\r\n".join(lines).encode("latin-1") + body)
        client.close()

    def _apply(self, client, index, method, target, head, body, fault, where) -> None:
        if fault == "reset":
            _reset(client)
            return
        if fault == "hang":
            time.sleep(self.hang_s)
            client.close()
            return
        if fault == "status_5xx":
            status = (500, 502, 503)[int(where * 3) % 3]
            self._answer(client, status, [("Content-Type", "text/plain")], b"chaos: injected failure\n")
            return
        if fault == "status_429":
            self._answer(client, 429, [("Retry-After", "1"), ("Content-Type", "text/plain")], b"slow down\n")
            return
        if fault in ("redirect_hop", "redirect_cross"):
            own = self.hub_url if index == 0 else self.storage_url
            other = self.storage_url if index == 0 else self.hub_url
            base = own if fault == "redirect_hop" else other
            self._answer(client, 307, [("Location", f"{base}/__chaos/hop?to=" +
                                        urllib.parse.quote(own + target, safe=""))])
            return
        # Forward on a fresh upstream connection.
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=60)
        try:
            lines = head.decode("latin-1").split("\r\n")
            kept = [line for line in lines[1:] if line and not line.lower().startswith("connection:")]
            upstream.sendall("\r\n".join([lines[0], *kept, "Connection: close", "", ""]).encode("latin-1") + body)
            got = _read_head(upstream)
            if got is None:
                _reset(client)
                return
            response_head, first = got
            if fault == "stall":
                time.sleep(self.stall_s)
            client.sendall(response_head)
            _, response_headers = _headers(response_head)
            total = int(response_headers.get("content-length", "0") or 0)
            strike = int(where * total) if total else 0
            sent = 0
            data = first
            struck = False
            while True:
                if data:
                    if not struck and fault in ("reset_mid", "truncate", "corrupt", "stall_mid") and \
                            sent + len(data) > strike:
                        struck = True
                        cut = strike - sent
                        if fault == "corrupt":
                            data = data[:cut] + bytes([data[cut] ^ 0x01]) + data[cut + 1:]
                        else:
                            client.sendall(data[:cut])
                            if fault == "reset_mid":
                                _reset(client)
                                return
                            if fault == "truncate":
                                client.close()
                                return
                            time.sleep(self.stall_s)
                            data = data[cut:]
                    client.sendall(data)
                    sent += len(data)
                data = upstream.recv(1 << 16)
                if not data:
                    break
            client.close()
        finally:
            upstream.close()


class SilentServer:
    """A hung Hub: accepts every connection on a loopback port (`port`, else any) and never
    answers; close() drops them. `held` lists the connections it accepted."""

    def __init__(self, port: int = 0) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)  # kept open, never written to

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()
