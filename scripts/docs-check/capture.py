#!/usr/bin/env python3
"""A loopback stand-in for the server: accepts one connection on 127.0.0.1 (port chosen by the system, written
to PORT_FILE), reads one length-delimited frame (u32 little-endian length, then the frame:
docs/wire-format.md, "Over a stream"), writes the frame to OUT and exits without acknowledging it.

    capture.py PORT_FILE OUT
"""
import socket
import struct
import sys

server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
with open(sys.argv[1], "w") as f:
    f.write(str(server.getsockname()[1]))
server.settimeout(60)
conn, _ = server.accept()
conn.settimeout(60)
data = b""
while len(data) < 4 or len(data) < 4 + struct.unpack_from("<I", data)[0]:
    chunk = conn.recv(65536)
    if not chunk:
        sys.exit("the connection closed before a whole frame")
    data += chunk
length = struct.unpack_from("<I", data)[0]
with open(sys.argv[2], "wb") as f:
    f.write(data[4 : 4 + length])
conn.close()
