"""Starting Ray: a node too slow to come up is started again; what cannot connect is one line."""

import pytest

from rlkit.core.errors import UsageError
from rlkit.sweeps.ray_connect import STARTUP_ATTEMPTS, init_ray

LATE = Exception("The current node timed out during startup. This could happen because ...")


class FakeRay:
    def __init__(self, *failures):
        self.failures, self.inits, self.shutdowns = list(failures), [], 0

    def init(self, **kwargs):
        self.inits.append(kwargs)
        if self.failures:
            raise self.failures.pop(0)

    def shutdown(self):
        self.shutdowns += 1


def test_a_late_node_is_started_again_on_the_loopback():
    ray = FakeRay(LATE)
    init_ray(ray, None)
    assert len(ray.inits) == 2 and ray.shutdowns == 1
    assert ray.inits[1]["_node_ip_address"] == "127.0.0.1" and "address" not in ray.inits[1]


def test_a_node_late_every_time_is_one_line():
    ray = FakeRay(*[LATE] * STARTUP_ATTEMPTS)
    with pytest.raises(UsageError, match="did not come up within Ray's own 30 s") as caught:
        init_ray(ray, None)
    assert "\n" not in str(caught.value) and len(ray.inits) == STARTUP_ATTEMPTS


def test_a_cluster_that_refuses_is_one_line_at_once():
    ray = FakeRay(ConnectionError("could not reach 10.0.0.9:6379\nmore"))
    with pytest.raises(UsageError, match=r"a Ray cluster at 10.0.0.9:6379: could"):
        init_ray(ray, "10.0.0.9:6379")
    assert len(ray.inits) == 1 and ray.inits[0]["address"] == "10.0.0.9:6379"


def test_other_errors_are_not_retried():
    ray = FakeRay(Exception("something else"))
    with pytest.raises(Exception, match="something else"):
        init_ray(ray, None)
    assert len(ray.inits) == 1
