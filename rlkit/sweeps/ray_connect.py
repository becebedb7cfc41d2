"""Reaching a Ray cluster for ``rlkit sweep`` and ``rlkit tune``: the address checked within
seconds (:func:`check_address`), and Ray started or joined quietly (:func:`init_ray`)."""

from __future__ import annotations

from rlkit.core.errors import UsageError

#: an HTTP/2 client's first bytes (a connection preface, then an empty SETTINGS frame): a
#: gRPC server, as a Ray head's GCS is, answers with a SETTINGS frame of its own
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
SETTINGS_FRAME = 4


def check_address(address: str | None, timeout: float = 3.0) -> None:
    """UsageError within seconds when ``address`` (``host:port`` of a Ray head node) is no
    Ray head: nothing answers there, or what answers does not speak gRPC (a Ray head's GCS
    does). ``ray.init`` itself would retry for minutes, printing Ray's logs. ``auto`` is
    left to Ray (it reads the address of the cluster started on this machine, and fails
    fast without one)."""
    import socket

    if not address or address == "auto" or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"bad --address {address!r}: expected HOST:PORT (e.g. 127.0.0.1:6379) "
                         "or auto")  # fmt: skip
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as connection:
            connection.settimeout(timeout)
            connection.sendall(HTTP2_PREFACE)
            answer = connection.recv(9)
    except TimeoutError:
        answer = b""
    except OSError as exc:
        raise UsageError(
            f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with "
            "'ray start --head' or drop --address for a local one"
        ) from None
    if len(answer) < 4 or answer[3] != SETTINGS_FRAME:
        raise UsageError(
            f"{address} is not a Ray head node (what listens there does not speak Ray's "
            "protocol); give the address 'ray start --head' printed, or drop --address"
        )


def on_this_machine(address: str | None) -> bool:
    """No address (a local Ray), or a head node on the loopback interface."""
    host = (address or "").removeprefix("ray://").rpartition(":")[0]
    return not address or host in ("127.0.0.1", "localhost")


#: Ray's words when its own node did not register in time (a wait of 30 s hard-coded in
#: ``ray._private.node.Node`` as of Ray 2.60): on a machine busy with other work, it did on
#: a second try
STARTUP_TIMEOUT = "timed out during startup"
STARTUP_ATTEMPTS = 3


def init_ray(ray, address: str | None) -> None:
    """``ray.init`` quietly, on the loopback for a cluster on this machine, tried again when
    Ray's node was too slow to start; UsageError in one line when no cluster can be
    reached."""
    kwargs = dict(log_to_driver=False, include_dashboard=False, configure_logging=True,
                  logging_level="ERROR")  # fmt: skip
    if on_this_machine(address):  # a cluster on this machine talks over the loopback only
        kwargs["_node_ip_address"] = "127.0.0.1"
    where = f"at {address}" if address else "on this machine"
    for _ in range(STARTUP_ATTEMPTS):
        try:
            ray.init(**({"address": address} if address else {}), **kwargs)
            return
        except (ConnectionError, RuntimeError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(f"cannot connect to a Ray cluster {where}: {first}") from None
        except Exception as exc:  # Ray raises a bare Exception when its node is late
            if STARTUP_TIMEOUT not in str(exc):
                raise
            ray.shutdown()  # what it started; then again
    raise UsageError(
        f"cannot start Ray {where}: its node did not come up within Ray's own 30 s, "
        f"{STARTUP_ATTEMPTS} times (a busy machine?); try again, or start one with "
        "'ray start --head' and give its address with --address"
    )
