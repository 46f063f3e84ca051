"""The robot's grounding over ROS 2: what the planning node asks before it plans (IALP).

The robot's node (``sim_world``, or a real robot's backend) serves its grounding provider as an
``Observe`` service (default name ``grounding``), reusing that typed interface rather than a new
one: the answer's ``observation.relations`` hold one :class:`Relation` per judged fact -
``predicate`` and ``arguments`` as in PDDL (``reachable [cup0]``), ``confidence`` 1.0 when it
holds and 0.0 when it does not, ``source`` "grounding" - and one with no arguments for each
predicate the robot cannot compute (``confidence`` 0, ``source`` "unavailable: <why>").
``Observe.location`` "" asks about every object the robot knows.
"""
from __future__ import annotations

import time
from typing import Optional

from affplan_ros.core.recovery.grounding import FactGrounding, GroundingAnswer, GroundingFacts
from affplan_ros.msg import Relation, SceneObservation
from affplan_ros.nodes.base import call_service
from affplan_ros.srv import Observe

UNAVAILABLE = "unavailable: "


def facts_to_msg(facts: GroundingFacts) -> SceneObservation:
    msg = SceneObservation()
    for (predicate, args), holds in sorted(facts.facts.items()):
        msg.relations.append(Relation(predicate=predicate, arguments=list(args), confidence=1.0 if holds else 0.0,
                                      source="grounding"))
    for predicate, why in sorted(facts.unavailable.items()):
        msg.relations.append(Relation(predicate=predicate, arguments=[], confidence=0.0,
                                      source=(UNAVAILABLE + why)[:1000]))
    return msg


def facts_from_msg(msg: SceneObservation) -> GroundingFacts:
    out = GroundingFacts()
    for rel in msg.relations:
        if not rel.arguments:
            why = rel.source[len(UNAVAILABLE):] if rel.source.startswith(UNAVAILABLE) else rel.source
            out.unavailable[rel.predicate] = why or f"{rel.predicate}: not available"
        else:
            out.facts[(rel.predicate, tuple(rel.arguments))] = rel.confidence >= 0.5
    return out


class GroundingClient:
    """Asks the robot's grounding service from a callback thread (its client must live in a
    callback group other executor threads serve)."""

    def __init__(self, node, client, timeout: float = 10.0, server_wait: float = 5.0):
        self.node, self.client, self.timeout, self.server_wait = node, client, timeout, server_wait

    def fetch(self) -> tuple[Optional[GroundingFacts], str]:
        """(the robot's facts, "") or (None, why not)."""
        got, error = call_service(self.client, Observe.Request(location=""), self.timeout,
                                  wait_s=self.server_wait, node=self.node, resend_silent_s=2.0)
        if got is None:
            return None, f"the robot's grounding did not answer: {error}"
        if not got.success:
            return None, f"the robot's grounding failed: {got.message}"
        return facts_from_msg(got.observation), ""


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
