#!/usr/bin/python3
"""What Linux does to a connection whose receiver is alive but does not read
(zero window), the case ch4:tcp's liveness rule must not mistake for a dead
peer (src/netmod/tcp/tcp_liveness.c).  On loopback, 6 s each:

  with TCP_USER_TIMEOUT=2000: SO_ERROR once a second (110 = ETIMEDOUT: killed)
  without it: TCP_INFO's retransmits, probes and last_ack_recv once a second
              (probes stays 0: the live receiver answers every probe)

    python3 bench/zero-window.py
"""
import socket
import struct
import time


def filled_pair(user_timeout_ms):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    c = socket.socket()
    if user_timeout_ms:
        c.setsockopt(socket.IPPROTO_TCP, 18, user_timeout_ms)     # TCP_USER_TIMEOUT
    c.connect(srv.getsockname())
    s, _ = srv.accept()
    c.setblocking(False)
    try:
        while True:
            c.send(b"x" * 65536)
    except BlockingIOError:
        pass
    return c, s


c, s = filled_pair(2000)
for i in range(6):
    time.sleep(1)
    print("TCP_USER_TIMEOUT=2 s, receiver not reading, %d s: SO_ERROR %d" %
          (i + 1, c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)))
c, s = filled_pair(0)
for i in range(6):
    time.sleep(1)
    ti = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    print("no USER_TIMEOUT, %d s: retransmits %d probes %d last_ack_recv %d ms" %
          (i + 1, ti[2], ti[3], struct.unpack_from("I", ti, 56)[0]))
