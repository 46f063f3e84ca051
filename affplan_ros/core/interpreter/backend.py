"""The offline interpreter behind the language-backend interface (``core.ports.ChatModel``).

It answers the three kinds of questions the AutoGPT+P loop asks, reading the structured
question behind each prompt (``goals.loop.ask`` passes it):

* a goal (:class:`GoalRequest`): the interpreter's goal, written as ``(:goal ...)``; it then
  goes through the same syntax, type and Prolog checks as a language model's answer;
* a tool (:class:`ToolPromptView` with the memory): PLAN when every object the request names
  is known; EXPLORE the place the request names, or the likeliest unexplored location, when
  one is missing; SUGGEST_ALTERNATIVE when nothing is left to explore; PARTIAL_PLAN for what
  the known objects allow; FAILURE when nothing helps any more;
* a Suggest Alternative question (:class:`AlternativeQuestion`): the missing class's key
  affordances, and the candidate whose affordances are most like the missing class's (the
  user confirms every proposal).

When it is not sure it raises :class:`Declined` with the reason: it never guesses a goal, and
a correction round (its own goal was rejected) is declined too - it cannot do better.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

from affplan_ros.core.agent.alternatives import AlternativeQuestion
from affplan_ros.core.agent.tool_loop import ToolPromptView
from affplan_ros.core.goals.loop import Completion, Declined, GoalMode, GoalRequest
from affplan_ros.core.interpreter.interpreter import Interpretation, Interpreter
from affplan_ros.core.interpreter.lexicon import Vocabulary
from affplan_ros.core.interpreter.questions import answer
from affplan_ros.core.interpreter.world import World
from affplan_ros.core.model.scene import class_of

BACKEND = "offline"
_SELECTED = re.compile(r"SELECTED TOOL:\s*(\w+)")
# PLAN choices per task once everything the request names is known (the first plan, then new
# plans from what failed executions observed); bounded like every loop over a planner.
MAX_PLANS = 3


@dataclass(frozen=True)
class ToolDecision:
    text: str            # the answer, in the format the tool loop parses
    why: str
    confident: bool      # PLAN with every object known: safe to skip an LLM (fast path)


def _failure(why: str) -> ToolDecision:
    """FAILURE, with the reason on the line before it (the loop tells the user)."""
    return ToolDecision(f"{why}\nFAILURE", why, False)


@dataclass
class OfflineModel:
    """``complete_in_context`` answers from the interpreter; ``complete`` (no context) declines."""

    oam: object = None
    interpreter: Interpreter = field(default_factory=Interpreter)
    max_rejections: int = 3          # alternatives the user may reject per missing class

    @property
    def vocabulary(self) -> Vocabulary:
        return self.interpreter.vocabulary

    def complete(self, messages: Sequence[dict]) -> Completion:
        raise Declined("the offline interpreter answers only the questions of the planning loop "
                       "(goal, tool, alternative), not free text", backend=BACKEND)

    def complete_in_context(self, messages: Sequence[dict], context: object) -> Completion:
        t0 = time.monotonic()
        if isinstance(context, GoalRequest):
            text = self.goal_answer(context, messages)
        elif isinstance(context, ToolPromptView):
            text = self.tool_decision(context, messages).text
        elif isinstance(context, AlternativeQuestion):
            text = self.alternative_answer(context)
        else:
            raise Declined(f"the offline interpreter cannot answer a {type(context).__name__} question",
                           backend=BACKEND)
        return Completion(text, 0, 0, time.monotonic() - t0, BACKEND)

    # -- goals --------------------------------------------------------------------------------
    def interpret_goal(self, request: GoalRequest) -> Interpretation:
        if request.scene is None:
            return Interpretation(reason="the goal request carries no scene to interpret it over")
        world = World.from_scene(request.scene, request.signature, request.names, oam=self.oam)
        partial = request.mode is GoalMode.PARTIAL_PLAN
        return self.interpreter.interpret(request.task, world, partial=partial,
                                          max_predicates=request.max_predicates if partial else None)

    def goal_answer(self, request: GoalRequest, messages: Sequence[dict] = ()) -> str:
        if any(m.get("role") == "assistant" for m in messages):
            last = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
            raise Declined(f"my goal was rejected and I cannot correct it: {str(last).strip()[:300]}", backend=BACKEND)
        res = self.interpret_goal(request)
        if not res.ok:
            raise Declined(res.reason or "not understood", backend=BACKEND)
        return res.goal_text or ""

    # -- tools --------------------------------------------------------------------------------
    def tool_decision(self, view: ToolPromptView, messages: Sequence[dict] = ()) -> ToolDecision:
        memory = view.memory
        if memory is None:
            raise Declined("the tool question carries no memory to decide over", backend=BACKEND)
        world = World.from_memory(memory, oam=self.oam)
        res = self.interpreter.interpret(view.request, world, partial=True)
        if res.question is not None:
            return ToolDecision(f"SELECTED TOOL: ANSWER {answer(res.question, memory, self.oam)}",
                                "a question: answered from memory", True)
        if res.kind == "declined":
            raise Declined(res.reason, backend=BACKEND)
        chosen = [m.group(1) for msg in messages if msg.get("role") == "assistant"
                  for m in _SELECTED.finditer(str(msg.get("content", "")))]
        unexplored = list(memory.unexplored())
        if res.ok and not res.missing:
            plans = chosen.count("PLAN")
            if not plans:
                return ToolDecision("SELECTED TOOL: PLAN", "every object the request names is known", True)
            if unexplored:  # the plan did not work out: what it needs may be elsewhere
                loc = self._explore_order(unexplored, None)[0]
                return ToolDecision(f"SELECTED TOOL: EXPLORE {loc}", "the plan failed; looking further", False)
            if plans < MAX_PLANS:
                # A failed execution updated the memory with what the robot saw (a door still
                # shut, a cup no longer where it was): a new plan starts from there.
                return ToolDecision("SELECTED TOOL: PLAN", "the plan failed; planning again from what was observed",
                                    False)
            return _failure(f"the plan failed {plans} times and nothing is left to explore")
        # A fixture the map does not show (no sink in this home) is not behind a door: no exploring for it.
        mapped = {class_of(loc) for loc in memory.locations}
        searchable = [m for m in res.missing if m.class_name not in self.vocabulary.map_fixtures
                      or m.class_name in mapped]
        missing = searchable[0] if searchable else None
        if missing is not None and missing.place in unexplored:
            return ToolDecision(f"SELECTED TOOL: EXPLORE {missing.place}", f"{missing.class_name} may be there", False)
        places = [p for p in unexplored if missing is not None and class_of(p) == missing.class_name]
        if places:
            return ToolDecision(f"SELECTED TOOL: EXPLORE {places[0]}", f"{missing.class_name} is a place to look at",
                                False)
        if unexplored and missing is not None:
            loc = self._explore_order(unexplored, missing.class_name)[0]
            return ToolDecision(f"SELECTED TOOL: EXPLORE {loc}", f"looking for {missing.class_name}", False)
        for m in res.missing:
            present = memory.objects_of_class(m.class_name)
            if present and m.place:
                # There is one, but not where the request says (it was moved): no alternative is
                # needed (the loop would refuse one), and the request names another place.
                where = {loc for loc, rec in memory.locations.items() for o in present if o in rec.objects}
                return _failure(f"no {m.class_name} at {m.place}; the robot knows {', '.join(present)}"
                                + (f" at {', '.join(sorted(where))}" if where else ", but not where it is now"))
            if (not present and m.class_name not in memory.substitutions and m.class_name in world.known_classes
                    and len(memory.rejected_for(m.class_name)) < self.max_rejections):
                return ToolDecision(f"SELECTED TOOL: SUGGEST_ALTERNATIVE {m.class_name}",
                                    f"no {m.class_name} anywhere", False)
        if res.ok and "PARTIAL_PLAN" not in chosen:
            return ToolDecision("SELECTED TOOL: PARTIAL_PLAN", "only part of the request is possible", False)
        return _failure("missing: " + ", ".join(m.text() for m in res.missing))

    def _explore_order(self, unexplored: list[str], class_name: Optional[str]) -> list[str]:
        """Unexplored locations, likeliest first for ``class_name`` (vocabulary explore_prior)."""
        affs = set(self.oam.affordances_of(class_name)) if (
            class_name and self.oam is not None and class_name in self.oam) else set()
        prior: list[str] = []
        for aff, classes in self.vocabulary.explore_prior.items():
            if aff in affs:
                prior += [c for c in classes if c not in prior]
        rank = lambda loc: prior.index(class_of(loc)) if class_of(loc) in prior else len(prior)  # noqa: E731
        return sorted(unexplored, key=lambda loc: (rank(loc), unexplored.index(loc)))

    # -- alternatives -------------------------------------------------------------------------
    def alternative_answer(self, q: AlternativeQuestion) -> str:
        if q.kind == "affordances":
            key = [a for a in q.options if a in self.vocabulary.alternative_key_affordances]
            return repr(key)
        best = self._most_similar(q.missing, q.options)
        if best is None:
            raise Declined(f"no listed object is like a {q.missing}", backend=BACKEND)
        return f"OBJECT: {best}"

    def _most_similar(self, missing: str, options: Sequence[str]) -> Optional[str]:
        """The option whose OAM affordances overlap most with the missing class's (Jaccard)."""
        if self.oam is None or missing not in self.oam:
            return None
        want = set(self.oam.affordances_of(missing))
        scored = []
        for o in options:
            if o in self.oam:
                have = set(self.oam.affordances_of(o))
                scored.append((len(want & have) / max(1, len(want | have)), o))
        scored = [s for s in scored if s[0] > 0]
        return max(scored, key=lambda s: (s[0], -options.index(s[1])))[1] if scored else None
