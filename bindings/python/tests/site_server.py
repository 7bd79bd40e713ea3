"""A local site for the crawl tests: PAGES pages at /p/0 .. /p/PAGES-1 whose
links form cycles and repeat (every page links to the next one, to two
scattered ones, to the first page, and to the next one again). Every GET is
appended to the access log (one path per line) before the page is sent.

usage: python3 site_server.py ACCESS_LOG [PAGES]
Prints the port it listens on (127.0.0.1) as its first line of output.
"""
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def links(i: int, pages: int) -> list:
    return [(i + 1) % pages, (i * 7 + 3) % pages, (i * 13 + 5) % pages, 0, (i + 1) % pages]


def main() -> None:
    log_path = sys.argv[1]
    pages = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    log = open(log_path, "a", buffering=1, encoding="ascii")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            with lock:
                log.write(self.path + "\n")
            parts = self.path.split("/")
            if len(parts) == 3 and parts[1] == "p" and parts[2].isdigit() and int(parts[2]) < pages:
                i = int(parts[2])
                body = "<html><body><h1>page %d</h1>%s</body></html>" % (
                    i,
                    "".join('<a href="/p/%d">%d</a> ' % (j, j) for j in links(i, pages)),
                )
                code = 200
            else:
                body, code = "not here", 404
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    class Server(ThreadingHTTPServer):
        # two crawlers open up to 128 connections at once; socketserver's
        # default backlog of 5 let a loaded machine refuse some (with retries
        # off, a refused page is never fetched and looked like a lost key)
        request_queue_size = 1024
        daemon_threads = True

    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
