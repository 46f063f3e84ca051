"""LASP: learning what the domain lacks from an execution failure, with five LLM roles.

When a step that the robot's model says is executable fails, the domain must lack something.
LASP's refine step (its Algorithm 1, as this project reads it):

1. *cause analyzer* - the failed step, its schema and the observation -> possible causes;
2. for each cause (at most ``max_causes``), *precondition generator* - the precondition the
   action lacks, in words;
3. *property completeness evaluator* - can the domain's predicates express it (YES/NO)?
4. *NL-to-PDDL translator* - the precondition in PDDL over the action's parameters; if the
   evaluator said NO it also declares a new property, whose values are taken from the most
   similar property the environment knows. Every answer is validated
   (:func:`~.knowledge.condition_problems`, :func:`~.knowledge.explains_failure`); problems go
   back to the translator (``max_corrections`` times), then the next cause is tried;
5. replan with the refined domain; if no plan exists, the *object expander* picks an object
   of the environment that the problem lacks (at most ``max_expansions``), and planning is
   tried again. A cause whose refinement yields no plan is dropped - unless
   ``keep_when_objects_unseen``: on a robot the environment is only what it has perceived, so
   a valid refinement (it explains the failure) that has no plan only because the environment
   offers no object the problem lacks is kept when no other cause yields a plan. It is
   recorded, and the refinement says ``needs_object``: the robot must find such an object
   (explore) before a plan exists.

The first refinement that yields a plan is recorded in the knowledge store and the plan is
returned; the caller executes it, and a new failure starts the next refinement (the recursion
of Algorithm 1, bounded by the caller). Nothing an LLM says reaches the domain unvalidated,
and no LLM answer is ever executed: the planner derives every action.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Protocol, Sequence

from affplan_ros.core.goals.errors import GoalError
from affplan_ros.core.goals.loop import ChatModelError, Message
from affplan_ros.core.goals.sexpr import parse_sexprs
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.planning.encoding import PDDL_CONFIG
from affplan_ros.core.ports import ChatModel
from affplan_ros.core.recovery.belief import Belief, Domain
from affplan_ros.core.recovery.knowledge import (
    EnvironmentProperty,
    KnowledgeStore,
    LearnedPrecondition,
    LearnedProperty,
    _known_unary_types,
    compiled,
    condition_problems,
    explains_failure,
    most_similar_property,
    property_problems,
    property_relations,
)
from affplan_ros.core.recovery.quantities import quantities_prompt

ROLES = ("cause", "precondition", "completeness", "translate", "expand")


class RecoveryEnvironment(Protocol):
    """What LASP may ask the environment (simulator ground truth; on a robot, perception and
    a knowledge base)."""

    def known_objects(self) -> list[tuple[str, str]]:
        """(name, class) of every object the environment can offer."""
        ...

    def object_scene(self, names: Sequence[str]) -> Scene:
        """These objects with their relations and locations, to add to the problem."""
        ...

    def properties(self) -> dict[str, EnvironmentProperty]:
        ...


def object_scene(scene: Scene, names: Sequence[str]) -> Scene:
    """``names`` from ``scene`` with what holds them (on/in, transitively) and the locations
    they are at, and the relations that mention them: what adding them to a problem needs."""
    keep = set(names)
    frontier = list(names)
    while frontier:
        o = frontier.pop()
        for r in scene.relations:
            if r.predicate in ("on", "in", "liquid_in") and len(r.args) == 2 and r.args[0] == o \
                    and r.args[1] not in keep:
                keep.add(r.args[1])
                frontier.append(r.args[1])
    for loc in scene.locations.values():
        if keep & set(loc.objects):
            keep.add(loc.name)
    part = scene.subset(keep)
    part.relations = [r for r in part.relations if any(a in names for a in r.args)]
    return part


@dataclass
class SceneEnvironment:
    """A :class:`RecoveryEnvironment` over a scene of everything the robot has perceived (on a
    robot: the memory's full scene, beyond the objects a problem was planned with) and the
    object properties a knowledge base can evaluate (none by default: then LASP cannot declare
    new properties, and says so)."""

    scene: Scene
    known_properties: dict = field(default_factory=dict)   # name -> EnvironmentProperty

    def known_objects(self) -> list[tuple[str, str]]:
        return [(n, o.class_name) for n, o in sorted(self.scene.objects.items()) if not o.is_agent]

    def object_scene(self, names: Sequence[str]) -> Scene:
        return object_scene(self.scene, names)

    def properties(self) -> dict[str, EnvironmentProperty]:
        return dict(self.known_properties)


@dataclass(frozen=True)
class FailureContext:
    task: str
    step: str           # the failed step as the plan wrote it
    action: str
    schema: str         # the action's parameters, precondition and effect as the robot knows them
    feedback: str       # Error / Reason / Suggestion at the configured level
    state: str          # the believed facts


class LaspPrompter(Protocol):
    def system(self) -> str: ...
    def cause(self, ctx: FailureContext, max_causes: int) -> str: ...
    def precondition(self, ctx: FailureContext, cause: str) -> str: ...
    def completeness(self, ctx: FailureContext, precondition: str, predicates: str) -> str: ...
    def translate(self, ctx: FailureContext, precondition: str, predicates: str, new_property: bool) -> str: ...
    def correction(self, problems: Sequence[str]) -> str: ...
    def expand(self, task: str, goal: str, problem_objects: Sequence[str], candidates: Sequence[str],
               reason: str) -> str: ...


@dataclass
class LLMUsage:
    """Calls, tokens and seconds per role (LASP Table III)."""

    calls: dict[str, int] = field(default_factory=dict)
    prompt_tokens: dict[str, int] = field(default_factory=dict)
    completion_tokens: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, role: str, completion, calls: int = 1) -> None:
        """Count ``calls`` calls of ``role`` costing ``completion``'s tokens and seconds."""
        self.calls[role] = self.calls.get(role, 0) + calls
        self.prompt_tokens[role] = self.prompt_tokens.get(role, 0) + int(completion.prompt_tokens)
        self.completion_tokens[role] = self.completion_tokens.get(role, 0) + int(completion.completion_tokens)
        self.seconds[role] = self.seconds.get(role, 0.0) + float(completion.seconds)

    def merge(self, other: "LLMUsage") -> None:
        for role, n in other.calls.items():
            self.calls[role] = self.calls.get(role, 0) + n
            self.prompt_tokens[role] = self.prompt_tokens.get(role, 0) + other.prompt_tokens.get(role, 0)
            self.completion_tokens[role] = self.completion_tokens.get(role, 0) + other.completion_tokens.get(role, 0)
            self.seconds[role] = self.seconds.get(role, 0.0) + other.seconds.get(role, 0.0)

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    @property
    def total_tokens(self) -> int:
        return sum(self.prompt_tokens.values()) + sum(self.completion_tokens.values())

    def to_dict(self) -> dict:
        return {"calls": dict(self.calls), "prompt_tokens": dict(self.prompt_tokens),
                "completion_tokens": dict(self.completion_tokens),
                "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
                "total_calls": self.total_calls, "total_tokens": self.total_tokens}


# -- parsing of the roles' answers -----------------------------------------------------------

_NUMBERED = re.compile(r"^\s*(?:\d+[.)]|[-*])\s+(.*\S)\s*$")


def parse_causes(text: str, limit: int) -> list[str]:
    """Numbered or bulleted lines (else non-empty lines), at most ``limit``."""
    lines = [l for l in (text or "").splitlines() if l.strip()]
    items = [m.group(1) for m in map(_NUMBERED.match, lines) if m]
    if not items:
        items = [l.strip() for l in lines if not l.strip().endswith(":")]
    return [re.sub(r"^(cause|reason)\s*:\s*", "", i, flags=re.I).strip() for i in items][:limit]


def parse_labelled(text: str, label: str) -> str:
    """The text after ``LABEL:`` (to the end of that line), else the last non-empty line."""
    m = list(re.finditer(rf"{label}\s*:\s*(.+)", text or "", re.IGNORECASE))
    if m:
        return m[-1].group(1).strip().strip("`")
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return lines[-1] if lines else ""


def parse_verdict(text: str) -> Optional[bool]:
    """YES -> True, NO -> False (the first one stated), None when neither is."""
    m = re.search(r"\b(YES|NO)\b", text or "")
    return None if m is None else m.group(1) == "YES"


def _first_sexpr_after(text: str, label: str) -> Optional[str]:
    m = list(re.finditer(rf"{label}\s*:", text or "", re.IGNORECASE))
    if not m:
        return None
    rest = text[m[-1].end():]
    start = rest.find("(")
    if start < 0:
        return None
    depth = 0
    for i, ch in enumerate(rest[start:], start):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return rest[start:i + 1]
    return None


@dataclass(frozen=True)
class Translation:
    condition: Optional[str]
    new_property: Optional[tuple[str, tuple[str, str], str]] = None   # (name, (var, type), description)
    problems: tuple[str, ...] = ()


def parse_translation(text: str) -> Translation:
    cond = _first_sexpr_after(text, "PRECONDITION")
    prop = None
    decl = _first_sexpr_after(text, "NEW PROPERTY")
    problems = []
    if decl is not None:
        try:
            (expr,) = parse_sexprs(decl)
        except (GoalError, ValueError):
            expr = None
        if (expr is None or isinstance(expr, str) or len(expr) != 4 or expr[2] != "-"
                or not str(expr[1]).startswith("?")):
            problems.append(f"NEW PROPERTY must look like (name ?x - type) ; description, not {decl}")
        else:
            after = text[text.find(decl) + len(decl):].split("\n", 1)[0]
            desc = after.split(";", 1)[1].strip() if ";" in after else parse_labelled(text, "DESCRIPTION")
            prop = (str(expr[0]), (str(expr[1])[1:], str(expr[3])), desc)
    if cond is None:
        problems.append("no PRECONDITION: (...) in the answer")
    return Translation(cond, prop, tuple(problems))


# -- the refine step -------------------------------------------------------------------------

def predicates_prompt(domain: Domain) -> str:
    """The domain's predicates for the roles: name, typed parameters, description."""
    aff = PDDL_CONFIG["affordance_prefix"]
    lines = []
    for p in domain.predicates.values():
        if p.name in domain.comparisons:   # a compiled comparison: the quantities below say it
            continue
        desc = p.description
        if p.internal and "(" in desc:  # "do not use this predicate (meaning)": goals only; preconditions may
            desc = desc[desc.index("(") + 1:desc.rindex(")")] + " (kept up to date by the actions)"
        lines.append("(" + " ".join([p.name] + [f"?{v} - {t}" for v, t in p.params]) + f") ; {desc}")

    lines.append(f"({aff}<affordance or class> ?x) ; ?x has that affordance, e.g. ({aff}heat-resistance ?x); "
                 f"affordances and classes: {', '.join(sorted(_known_unary_types(domain)))}")
    quantities = quantities_prompt(domain.quantities)
    if quantities:
        lines.append(quantities)
    return "\n".join(lines)


# A home's facts beyond this many are narrowed to what a failed step concerns (a thousand objects
# have thousands of facts; the cause is in the ones about the step's objects).
STATE_FACTS = 60
# The object expander lists at most this many candidates, one per class beyond it.
EXPAND_CANDIDATES = 40


def failure_state(scene: Scene, args: Sequence[str]) -> str:
    """The believed facts a failure analysis is shown: all of a small home's; in a larger one
    those about the step's arguments, what holds them and what they hold, and where the agents
    are, with the number of the others."""
    rels = list(scene.relations)
    if len(rels) <= STATE_FACTS:
        return "\n".join(str(r) for r in rels)
    step = set(args)
    near = step | {r.args[1] for r in rels if len(r.args) == 2 and r.args[0] in step}    # holders
    near |= {r.args[0] for r in rels if len(r.args) == 2 and r.args[1] in step}          # contents
    agents = {n for n, o in scene.objects.items() if o.is_agent}
    shown = [r for r in rels if (r.args and r.args[0] in near) or (r.predicate == "at" and r.args[0] in agents)]
    return "\n".join([*(str(r) for r in shown), f"({len(rels) - len(shown)} other facts about other things)"])


def expand_candidates(cands: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """(name, class) candidates to list: all of them up to EXPAND_CANDIDATES, else one per class
    (the expander names a kind of thing; any of that class would do)."""
    if len(cands) <= EXPAND_CANDIDATES:
        return list(cands)
    seen: dict[str, tuple[str, str]] = {}
    for n, c in sorted(cands):
        seen.setdefault(c, (n, c))
    return list(seen.values())


def schema_text(domain: Domain, action: str) -> str:
    cap = domain.capabilities[action]
    params = ([] if cap.environment else ["?actor - actor"]) + [f"?{p.name} - {p.type}" for p in cap.parameters]
    return (f"(:action {cap.name} :parameters ({' '.join(params)})\n :precondition {cap.precondition}\n"
            f" :effect {cap.effect})" + (f"\n; {cap.description}" if cap.description else ""))


@dataclass
class PlanAttemptResult:
    """What a planning attempt with a refined domain gave (from the caller's callback)."""

    solved: bool
    plan: list = field(default_factory=list)
    status: str = ""
    message: str = ""
    result: object = None   # the PlanResult


@dataclass
class Refinement:
    """One refine step's outcome."""

    ok: bool
    stop_reason: str = ""              # why no refinement was found
    domain: Optional[Domain] = None
    belief: Optional[Belief] = None
    plan: Optional[PlanAttemptResult] = None
    learned: list[LearnedPrecondition] = field(default_factory=list)
    properties: list[LearnedProperty] = field(default_factory=list)
    objects_added: list[str] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)   # proposals refused by validation, with why
    usage: LLMUsage = field(default_factory=LLMUsage)
    transcript: list[dict] = field(default_factory=list)
    # Learned, but no plan with the objects the environment knows (keep_when_objects_unseen).
    needs_object: bool = False
    environment_exhausted: bool = False   # the last expansion found no object the problem lacks


PlanFn = Callable[[Domain, Belief], PlanAttemptResult]


@dataclass
class Lasp:
    llm: ChatModel
    prompter: LaspPrompter
    knowledge: KnowledgeStore
    environment: Optional[RecoveryEnvironment] = None
    max_causes: int = 3
    max_corrections: int = 1
    max_expansions: int = 2
    similarity_threshold: float = 0.3
    max_seconds: Optional[float] = None
    keep_when_objects_unseen: bool = False
    # Completes objects the expander added (learned property facts, grounding facts):
    # (belief, added names, properties in force). None: property facts only.
    complete_objects: Optional[Callable[[Belief, Sequence[str], Sequence[LearnedProperty]], None]] = None

    def _complete(self, belief: Belief, added: Sequence[str], props: Sequence[LearnedProperty]) -> None:
        if self.complete_objects is not None:
            self.complete_objects(belief, added, props)
            return
        env = self.environment.properties() if self.environment is not None else {}
        part = belief.scene.subset(added)
        for rel in property_relations(props, part, env):
            belief.scene.add_relation(rel.predicate, *rel.args)

    # -- LLM ---------------------------------------------------------------------------------
    def _ask(self, role: str, user: str, out: Refinement, history: Optional[list[Message]] = None) -> str:
        messages = history if history is not None else [{"role": "system", "content": self.prompter.system()}]
        messages.append({"role": "user", "content": user})
        c = self.llm.complete(list(messages))
        out.usage.add(role, c)
        messages.append({"role": "assistant", "content": c.text or ""})
        out.transcript.append({"role": role, "question": user, "answer": c.text or ""})
        return c.text or ""

    # -- object expander ---------------------------------------------------------------------
    def expand(self, task: str, goal_text: str, belief: Belief, reason: str, out: Refinement,
               props: Sequence[LearnedProperty] = ()) -> Optional[str]:
        """Ask for one environment object the problem lacks; validated; added to ``belief``."""
        if self.environment is None:
            out.rejected.append("object expander: no environment to take objects from")
            out.environment_exhausted = True
            return None
        have = set(belief.scene.objects)
        lacking = [(n, c) for n, c in self.environment.known_objects() if n not in have]
        if not lacking:
            out.rejected.append("object expander: the environment has no object the problem lacks")
            out.environment_exhausted = True
            return None
        cands = [f"{n} ({c})" for n, c in expand_candidates(lacking)]
        shown_have = sorted(have)
        if len(shown_have) > EXPAND_CANDIDATES:   # the kinds of thing it has, not every one of them
            shown_have = [n for n, _ in expand_candidates([(n, belief.scene.objects[n].class_name) for n in have])]
            shown_have.append(f"and {len(have) - len(shown_have)} more of these kinds")
        answer = self._ask("expand", self.prompter.expand(task, goal_text, shown_have, cands, reason), out)
        name = parse_labelled(answer, "OBJECT").split()[0].strip(".,;:`'\"()") if answer.strip() else ""
        valid = {n for n, _ in lacking}
        if name not in valid:
            out.rejected.append(f"object expander answered {name!r}, which is not one of the objects the "
                                f"problem lacks")
            return None
        added = belief.add_objects(self.environment.object_scene([name]))
        self._complete(belief, added, list(self.knowledge.properties) + list(props))
        out.objects_added += added
        return name

    def plan_with_expansion(self, domain: Domain, belief: Belief, plan: PlanFn, task: str, goal_text: str,
                            out: Refinement, props: Sequence[LearnedProperty] = ()) -> PlanAttemptResult:
        """Plan; while there is no plan, add an object the expander picks (bounded)."""
        attempt = plan(domain, belief)
        for _ in range(self.max_expansions):
            if attempt.solved or attempt.status not in ("unsolvable",):
                break
            if self.expand(task, goal_text, belief, f"no plan exists: {attempt.message}", out, props) is None:
                break
            attempt = plan(domain, belief)
        return attempt

    # -- refine ------------------------------------------------------------------------------
    def refine(self, ctx: FailureContext, failed_step, domain: Domain, belief: Belief, plan: PlanFn,
               goal_text: str) -> Refinement:
        out = Refinement(False)
        t0 = time.monotonic()
        try:
            causes = parse_causes(self._ask("cause", self.prompter.cause(ctx, self.max_causes), out), self.max_causes)
        except ChatModelError as exc:
            out.stop_reason = f"llm_error: {exc}"
            return out
        out.causes = causes
        if not causes:
            out.stop_reason = "no_cause: the cause analyzer named no cause"
            return out
        unseen: list = []   # (item, property) valid but without a plan for want of an object
        for cause in causes:
            if self.max_seconds is not None and time.monotonic() - t0 > self.max_seconds:
                out.stop_reason = f"time_limit: refinement took over {self.max_seconds:g} s"
                return out
            try:
                got = self._refine_cause(ctx, cause, failed_step, domain, belief, plan, goal_text, out, unseen)
            except ChatModelError as exc:
                out.stop_reason = f"llm_error: {exc}"
                return out
            if got:
                out.ok = True
                return out
        if unseen:
            item, prop = unseen[0]
            if prop is not None:
                self.knowledge.add_property(prop)
                out.properties.append(prop)
            self.knowledge.add_precondition(item)
            out.learned.append(item)
            out.needs_object = True
            out.stop_reason = (f"needs_object: learned {item.action} requires {item.condition}, but no object "
                               "the robot knows makes a plan with it: it must find one (explore)")
            return out
        out.stop_reason = (f"no_refinement: none of the {len(causes)} causes gave a valid precondition "
                           f"with a plan")
        return out

    def _refine_cause(self, ctx, cause, failed_step, domain: Domain, belief: Belief, plan: PlanFn,
                      goal_text: str, out: Refinement, unseen: Optional[list] = None) -> bool:
        pre_nl = parse_labelled(self._ask("precondition", self.prompter.precondition(ctx, cause), out),
                                "PRECONDITION")
        preds = predicates_prompt(domain)
        verdict = parse_verdict(self._ask("completeness", self.prompter.completeness(ctx, pre_nl, preds), out))
        new_allowed = verdict is False
        history: list[Message] = [{"role": "system", "content": self.prompter.system()}]
        question = self.prompter.translate(ctx, pre_nl, preds, new_allowed)
        for _round in range(1 + self.max_corrections):
            answer = self._ask("translate", question, out, history)
            tr = parse_translation(answer)
            problems = list(tr.problems)
            d2, b2, prop = domain, belief.copy(), None
            if not problems and tr.new_property is not None:
                if not new_allowed:
                    problems.append("use the existing predicates (the evaluator found them sufficient); "
                                    "do not declare a NEW PROPERTY")
                else:
                    prop, perr = self._new_property(tr.new_property, domain, ctx)
                    problems += perr
                    if prop is not None:
                        d2 = domain.with_predicate(prop.predicate())
                        b2 = Belief(b2.scene, d2)
                        env = self.environment.properties() if self.environment is not None else {}
                        for rel in property_relations([prop], b2.scene, env):
                            b2.scene.add_relation(rel.predicate, *rel.args)
            if not problems:
                problems += condition_problems(d2, ctx.action, tr.condition)
            cond = tr.condition
            if not problems:
                d2, cond = compiled(d2, tr.condition)   # comparisons of quantities -> static predicates
                b2 = Belief(b2.scene, d2)
                ok, why = explains_failure(b2, failed_step, tr.condition)
                if not ok:
                    problems.append(why)
            if problems:
                out.rejected.append(f"{tr.condition or answer.strip()[:80]!r}: " + "; ".join(problems))
                question = self.prompter.correction(problems)
                continue
            d3 = d2.with_precondition(ctx.action, cond)
            b3 = Belief(b2.scene, d3)
            out.environment_exhausted = False
            attempt = self.plan_with_expansion(d3, b3, plan, ctx.task, goal_text, out, [prop] if prop else [])
            item = LearnedPrecondition(ctx.action, " ".join(tr.condition.split()), pre_nl, cause, ctx.task,
                                       ctx.feedback.splitlines()[0] if ctx.feedback else "")
            if not attempt.solved:
                out.rejected.append(f"{tr.condition}: no plan with it ({attempt.status}: {attempt.message})")
                if (self.keep_when_objects_unseen and unseen is not None and attempt.status == "unsolvable"
                        and out.environment_exhausted):
                    unseen.append((item, prop))
                return False
            if prop is not None:
                self.knowledge.add_property(prop)
                out.properties.append(prop)
            self.knowledge.add_precondition(item)
            out.learned.append(item)
            out.domain, out.belief, out.plan = d3, b3, attempt
            return True
        return False

    def _new_property(self, decl, domain: Domain, ctx) -> tuple[Optional[LearnedProperty], list[str]]:
        name, (var, ptype), desc = decl
        problems = property_problems(domain, name, ptype, desc)
        if problems:
            return None, problems
        known = self.environment.properties() if self.environment is not None else {}
        env, score = most_similar_property(name, desc, known.values(), self.similarity_threshold)
        if env is None:
            return None, [f"the environment knows no property like {name!r} ({desc}); it knows: "
                          + (", ".join(f"{p.name} ({p.description})" for p in known.values()) or "none")]
        classes = sorted({c for n, c in (self.environment.known_objects() if self.environment else [])
                          if n in env.true_objects})
        return LearnedProperty(name, (var, ptype), desc, env.name, tuple(classes), tuple(sorted(env.true_objects)),
                               ctx.task), []


def learned_render(items: Sequence[LearnedPrecondition], props: Sequence[LearnedProperty]) -> str:
    lines = [f"new property ({p.name} ?{p.param[0]} - {p.param[1]}): {p.description} (values from the "
             f"environment's {p.source!r})" for p in props]
    lines += [f"{i.action} now requires {i.condition}" + (f" ({i.text})" if i.text else "") for i in items]
    return "\n".join(lines)


