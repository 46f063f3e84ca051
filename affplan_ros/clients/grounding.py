"""The robot's grounding over ROS 2: what the planning node asks before it plans (IALP).

The robot's node (``sim_world``, or a real robot's backend) serves its grounding provider as a
``Ground`` service (default name ``grounding``): ``holds`` and ``fails`` are the judged facts as
:class:`Relation` (``predicate`` and ``arguments`` as in PDDL: ``reachable [cup0]``), and
``unavailable`` / ``unavailable_why`` the predicates the robot cannot judge, with why.
``predicates`` [] asks about every predicate, for every object the robot knows.
"""
from __future__ import annotations

import time
from typing import Optional

from affplan_ros.core.recovery.grounding import FactGrounding, GroundingAnswer, GroundingFacts
from affplan_ros.msg import Relation
from affplan_ros.nodes.base import call_service
from affplan_ros.srv import Ground

SOURCE = "grounding"


def facts_to_response(facts: GroundingFacts, response: Ground.Response) -> Ground.Response:
    """Fill ``response`` with ``facts`` (success and message are the caller's)."""
    for (predicate, args), holds in sorted(facts.facts.items()):
        rel = Relation(predicate=predicate, arguments=list(args), confidence=1.0, source=SOURCE)
        (response.holds if holds else response.fails).append(rel)
    for predicate, why in sorted(facts.unavailable.items()):
        response.unavailable.append(predicate)
        response.unavailable_why.append(why[:1000])
    return response


def facts_from_response(response: Ground.Response) -> GroundingFacts:
    out = GroundingFacts()
    for holds, rels in ((True, response.holds), (False, response.fails)):
        for rel in rels:
            out.facts[(rel.predicate, tuple(rel.arguments))] = holds
    whys = list(response.unavailable_why)
    for i, predicate in enumerate(response.unavailable):
        out.unavailable[predicate] = (whys[i] if i < len(whys) else "") or f"{predicate}: not available"
    return out


class GroundingClient:
    """Asks the robot's grounding service from a callback thread (its client must live in a
    callback group other executor threads serve)."""

    def __init__(self, node, client, timeout: float = 10.0, server_wait: float = 5.0):
        self.node, self.client, self.timeout, self.server_wait = node, client, timeout, server_wait

    def fetch(self) -> tuple[Optional[GroundingFacts], str]:
        """(the robot's facts, "") or (None, why not)."""
        got, error = call_service(self.client, Ground.Request(), self.timeout,
                                  wait_s=self.server_wait, node=self.node, resend_silent_s=2.0)
        if got is None:
            return None, f"the robot's grounding did not answer: {error}"
        if not got.success:
            return None, f"the robot's grounding failed: {got.message}"
        return facts_from_response(got), ""


class LiveGrounding:
    """A :class:`~affplan_ros.core.recovery.grounding.GroundingProvider` that asks the robot
    (through ``client``, a :class:`GroundingClient`) at most once per ``max_age_s``: one
    grounding of the domain asks about every predicate in a row. A robot that does not answer
    makes every predicate not available, with the reason (the recovery loop reports it)."""

    def __init__(self, client: GroundingClient, max_age_s: float = 1.0):
        self.client, self.max_age_s = client, max_age_s
        self._facts: Optional[GroundingFacts] = None
        self._error, self._at = "", -1e9

    def ground(self, predicate, candidates) -> GroundingAnswer:
        if time.monotonic() - self._at > self.max_age_s:
            self._facts, self._error = self.client.fetch()
            self._at = time.monotonic()
        if self._facts is None:
            return GroundingAnswer(predicate.name, False, reason=f"{predicate.name}: {self._error}")
        return FactGrounding(self._facts).ground(predicate, candidates)
