"""A loopback page server for the MCP client scripts: order without a clock."""
import select
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Gate:
    """A loopback page server whose pages load only when the test says so.

    A request for /hold/NAME is held until release(); meanwhile the test can ask
    whether it is still held (not released, and the browser has not given up on
    it). That proves order without a clock: a call that answers while another
    call's page is still held ran beside it, not after it.
    """

    def __init__(self):
        self.cond = threading.Condition()
        self.seen = set()
        self.aborted = set()
        self.released = False
        gate = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                name = self.path.rsplit("/", 1)[-1]
                with gate.cond:
                    gate.seen.add(name)
                    gate.cond.notify_all()
                # Held until released; a closed connection (the browser gave up) is noted.
                while True:
                    with gate.cond:
                        if gate.released or gate.cond.wait(0.05) and gate.released:
                            break
                    readable, _, _ = select.select([self.connection], [], [], 0)
                    if readable and not self.connection.recv(1, socket.MSG_PEEK):
                        with gate.cond:
                            gate.aborted.add(name)
                        return
                body = b"<!doctype html><title>released</title><p>released"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, name):
        return f"http://127.0.0.1:{self.server.server_address[1]}/hold/{name}"

    def wait_seen(self, name):
        """Block until the browser asked for NAME (at most 60 s)."""
        with self.cond:
            return self.cond.wait_for(lambda: name in self.seen, 60)

    def held(self, name):
        with self.cond:
            return name in self.seen and name not in self.aborted and not self.released

    def release(self):
        with self.cond:
            self.released = True
            self.cond.notify_all()
