"""fake_clickhouse.py MODE PORTFILE [UPSTREAM]: a server on 127.0.0.1 (its
port written into PORTFILE once it listens) that does what ClickHouse never
does, for tests/lib/fake_clickhouse.sh. MODE:
  silent, close      never answers (30 s) / closes every connection at once;
  garbage, web       answers not HTTP / a web page, not "Ok.", to the ping;
  truncated          pings "Ok.", then a body cut in the middle;
  endless, chunked   pings "Ok.", then a body until 1 GB (ended by close /
                     in 1 MB chunks); endless-ping: the ping itself so;
  huge               pings "Ok.", then Content-Length: 3 GB;
  trickle            pings "Ok.", then a 1000-byte body, one byte a second;
  trickle-head       pings "Ok.", then a header, one byte a second;
  idle-close         a proxy to 127.0.0.1:UPSTREAM closing the client's
                     connection after each answer;
  cut-commit         that proxy, cutting the connection at the request that
                     would insert into mp_run."""
import os, socket, socketserver, sys, time

mode, portfile = sys.argv[1], sys.argv[2]
upstream = int(sys.argv[3]) if len(sys.argv) > 3 else 0
MB = b'x' * (1 << 20)
PONG = b'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nOk.\n'


def read_request(f):
    """(head, body) of the next request, (None, None) at the end"""
    head = b''
    while not head.endswith(b'\r\n\r\n'):
        line = f.readline()
        if not line:
            return None, None
        head += line
    n = 0
    for line in head.split(b'\r\n'):
        if line.lower().startswith(b'content-length:'):
            n = int(line.split(b':')[1])
    return head, f.read(n)


def relay(head, body):
    """the upstream server's answer to the request, without its Connection:"""
    head = head.replace(b'Connection: keep-alive', b'Connection: close')
    u = socket.create_connection(('127.0.0.1', upstream))
    u.sendall(head + body)
    answer = b''
    while True:
        b = u.recv(65536)
        if not b:
            break
        answer += b
    u.close()
    top, _, rest = answer.partition(b'\r\n\r\n')
    top = b'\r\n'.join(l for l in top.split(b'\r\n') if not l.lower().startswith(b'connection:'))
    return top + b'\r\n\r\n' + rest


def slowly(w, data):
    for c in data:
        w.write(bytes([c]))
        w.flush()
        time.sleep(1)


def answer_badly(w):
    """the answer of the modes that ping "Ok." and then misbehave"""
    if mode == 'truncated':
        w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789')
    elif mode in ('endless', 'endless-ping'):
        w.write(b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n')
        for _ in range(1024):
            w.write(MB)
    elif mode == 'chunked':
        w.write(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')
        for _ in range(1024):
            w.write(b'100000\r\n' + MB + b'\r\n')
    elif mode == 'huge':
        w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 3000000000\r\n\r\n')
        for _ in range(1024):
            w.write(MB)
    elif mode == 'trickle':
        w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n')
        slowly(w, b'1' * 1000)
    elif mode == 'trickle-head':
        slowly(w, b'HTTP/1.1 200 OK\r\nX-Slow: ' + b'y' * 1000)


BAD_ANSWERS = ('truncated', 'endless', 'endless-ping', 'chunked', 'huge', 'trickle', 'trickle-head')


def serve(r, w):
    if mode == 'close':
        return
    if mode == 'silent':
        time.sleep(30)
        return
    while True:
        head, body = read_request(r)
        if head is None:
            return
        if mode == 'garbage':
            w.write(b'SSH-2.0-OpenSSH_9.2\r\n')
            return
        if mode == 'web':
            w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n<html>hi</html>')
            continue
        if mode in BAD_ANSWERS:
            if head.startswith(b'GET /ping') and mode != 'endless-ping':
                w.write(PONG)
                w.flush()
                continue
            answer_badly(w)
            return
        if mode == 'cut-commit' and b'INSERT%20INTO%20mp_run%20' in head.split(b'\r\n')[0]:
            return
        w.write(relay(head, body))
        w.flush()
        if mode == 'idle-close':
            return


class H(socketserver.StreamRequestHandler):
    def handle(self):
        try:
            serve(self.rfile, self.wfile)
        except (BrokenPipeError, ConnectionResetError):
            return


class S(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


s = S(('127.0.0.1', 0), H)
open(portfile + '.tmp', 'w').write(str(s.server_address[1]))
os.rename(portfile + '.tmp', portfile)
s.serve_forever()
