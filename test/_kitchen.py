"""A small kitchen for the loop tests: a table where the robot and the person are, a counter
and a closed refrigerator, each a location; its own OAM so the tests need no ../shared."""
from __future__ import annotations

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.knowledge.oam import OamDatabase

OBJECTS = ["human:0", "table:0", "counter:0", "refrigerator:0", "cup:0", "banana:0", "orange:0",
           "apple:0", "knife:0", "board:0", "milk:0"]
RELATIONS = ["on cup:0 table:0", "on banana:0 table:0", "on orange:0 table:0", "on apple:0 counter:0",
             "on knife:0 counter:0", "on board:0 table:0", "in milk:0 refrigerator:0",
             "closed refrigerator:0", "at robot:0 table:0", "at human:0 table:0"]
LOCATIONS = {"table0": ["table:0", "cup:0", "banana:0", "orange:0", "board:0"],
             "counter0": ["counter:0", "apple:0", "knife:0"],
             "refrigerator0": ["refrigerator:0", "milk:0"]}

OAM = OamDatabase({
    "human": frozenset(),
    "table": frozenset({"support", "sturdy-support"}),
    "counter": frozenset({"support", "sturdy-support"}),
    "refrigerator": frozenset({"contain", "open", "close"}),
    "cup": frozenset({"grasp", "carry", "contain", "liquid-contain", "drink"}),
    "banana": frozenset({"grasp", "carry", "consumable"}),
    "orange": frozenset({"grasp", "carry", "consumable", "free-roll"}),
    "apple": frozenset({"grasp", "carry", "consumable", "free-roll"}),
    "knife": frozenset({"grasp", "carry", "cut"}),
    "board": frozenset({"grasp", "carry", "support", "sturdy-support"}),
    "milk": frozenset({"grasp", "carry", "contain", "liquid-contain", "pour"}),
}, "kitchen-test")


def kitchen_scene(without: tuple[str, ...] = ()):
    """The kitchen as a scene; ``without``: objects (``apple:0``) left out of it."""
    keep = lambda tok: tok not in without  # noqa: E731
    rels = [r for r in RELATIONS if all(keep(t) for t in r.split()[1:])]
    locs = [f"{n} " + " ".join(t for t in toks if keep(t)) for n, toks in LOCATIONS.items()]
    text = "\n".join(["OBJECTS", *[o for o in OBJECTS if keep(o)], "END-OBJECTS", "RELATIONS", *rels,
                      "END-RELATIONS", "LOCATIONS", *locs, "END-LOCATIONS"])
    return parse_scene_text(text, "kitchen-test")


def client_for(server, **kw):
    from affplan_ros.llm import ChatClient, LLMConfig

    return ChatClient(LLMConfig(base_url=server.base_url, model="fake", api_key_env="",
                                timeout_s=kw.get("timeout_s", 5.0), max_retries=0))
