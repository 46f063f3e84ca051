"""A mobile bimanual robot modelled on PAL Robotics' Tiago++, written as MJCF by this module.

Figures used, and where they come from. PAL's public Tiago++ datasheet gives the first group;
the joint ranges are approximate values recalled from the public ``tiago_description`` URDF (no
network here to check them), re-based onto this model's own joint zero positions, so treat them
as *approximate*:

* base: omnidirectional (Tiago OMNI base option), modelled holonomic as two planar slides and a
  yaw hinge; diameter 54 cm (radius 0.27 m); top speed 1 m/s (datasheet), driven here at 0.5 m/s
  (a cautious indoor speed); mass ~40 kg of the ~70-80 kg robot (approximate).
* height 110-145 cm: a torso lift with a 35 cm stroke (datasheet), so shoulders at ~0.80 m with
  the torso down and ~1.15 m up (approximate, chosen so the head top is at 1.10-1.45 m).
* arms: 7 DoF each, reach 87 cm (datasheet; here 0.82 m shoulder to gripper centre, ~0.85 m to
  the finger tips), payload 2 kg per arm (datasheet; the wrist and gripper force limits below
  hold 2 kg with margin, not much more). Joint ranges (rad), widths as on Tiago's arm:
  shoulder yaw 2.61 (Tiago arm_1 0.07..2.68), shoulder pitch -1.50..1.02 (arm_2), upper-arm roll
  ±2.48 (arm_3, -3.46..1.5 re-centred), elbow -0.32..2.29 (arm_4), wrist roll ±2.07 (arm_5),
  wrist pitch ±1.39 (arm_6), wrist roll ±2.07 (arm_7). Joint speeds ~1.9 rad/s (arm_1-4) and
  ~1.7 rad/s (arm_5-7) on Tiago; motions here are planned at 1.0 rad/s.
* grippers: PAL parallel gripper, two fingers on slides, aperture 0-0.09 m (each finger 0-4.5 cm);
  grip force limited to 40 N per finger (approximate).
* head: pan ±1.24 rad, tilt -0.98..0.79 rad (approximate, from tiago_description) with an RGB-D
  camera (Tiago: an Orbbec Astra, ~60 x 49.5 degrees field of view; modelled by fovy=49.5).

The kinematic chain is a simplification of Tiago's (offsets between joint axes dropped; the
shoulder yaw/pitch/roll axes meet in one point), which keeps reach and joint ranges close but
not the exact workspace shape. Every moving link but the base has ``gravcomp`` (as Tiago's
controllers compensate gravity), so the position servos track without sag; what the arm holds is
not compensated, so a heavy object shows up as tracking error.

Collision filtering: robot geoms have ``contype=2 conaffinity=1`` and world geoms
``contype=1 conaffinity=3``, so the robot touches the world (and what it grasps) but not itself;
self-collision avoidance is left to the motions (arms move in front of the body).
"""
from __future__ import annotations

from dataclasses import dataclass

# Names of joints and actuators, shared by the world, the IK and the skills.
BASE_JOINTS = ("base_x", "base_y", "base_yaw")
TORSO_JOINT = "torso_lift"
HEAD_JOINTS = ("head_pan", "head_tilt")
ARM_SIDES = ("r", "l")


def arm_joints(side: str) -> tuple[str, ...]:
    return tuple(f"{side}_arm_{i}" for i in range(1, 8))


# Half extents of a finger pad (along the approach, across the closing direction = its thickness,
# sideways); grasp planning keeps this volume of each finger clear of other things.
PAD_HALF = (0.03, 0.006, 0.012)
FINGER_KP = 2000.0
FINGER_SQUEEZE = 0.025     # m past shut a closing finger is driven to: kp x 0.025 = 50 N > the force limit


def finger_joints(side: str) -> tuple[str, str]:
    return (f"{side}_finger_a", f"{side}_finger_b")


def tcp_site(side: str) -> str:
    """The tool centre point: between the finger pads, where a grasped object's centre goes."""
    return f"{side}_tcp"


def pad_geoms(model) -> dict[str, list[int]]:
    """Per arm side, the geom ids of its two finger pads (what holds a thing between them)."""
    return {side: [model.geom(f"{side}_pad_{f}").id for f in ("a", "b")] for side in ARM_SIDES}


@dataclass(frozen=True)
class RobotSpec:
    """The figures the MJCF is generated from (see the module docstring for their sources)."""

    base_radius: float = 0.27
    base_height: float = 0.30
    base_mass: float = 40.0
    base_speed: float = 0.5            # m/s used by navigate (datasheet top speed 1.0)
    base_yaw_rate: float = 1.0         # rad/s
    torso_stroke: float = 0.35
    shoulder_height: float = 0.80      # with the torso down
    shoulder_offset_y: float = 0.18    # from the torso axis to each shoulder
    torso_x: float = -0.05             # torso axis behind the base centre, arms reach forward
    upper_arm: float = 0.34
    forearm: float = 0.33
    wrist_to_tcp: float = 0.145
    finger_stroke: float = 0.045       # per finger; aperture = 2 * stroke
    finger_force: float = 40.0         # N per finger
    arm_speed: float = 1.0             # rad/s used when interpolating arm motions
    # (lower, upper) in rad for the right arm; the left arm mirrors yaw and roll joints.
    arm_ranges: tuple[tuple[float, float], ...] = (
        (-1.57, 1.04),   # 1 shoulder yaw (z): 0 = forward, negative = outward for the right arm
        (-1.50, 1.02),   # 2 shoulder pitch (y): positive lowers the upper arm
        (-2.48, 2.48),   # 3 upper-arm roll (x)
        (-0.32, 2.29),   # 4 elbow (y): positive bends the forearm down
        (-2.07, 2.07),   # 5 wrist roll (x)
        (-1.39, 1.39),   # 6 wrist pitch (y)
        (-2.07, 2.07),   # 7 wrist roll (x)
    )
    head_pan: tuple[float, float] = (-1.24, 1.24)
    head_tilt: tuple[float, float] = (-0.98, 0.79)
    camera_fovy: float = 49.5          # degrees

    @property
    def max_aperture(self) -> float:
        return 2 * self.finger_stroke

    def arm_range(self, side: str, index: int) -> tuple[float, float]:
        lo, hi = self.arm_ranges[index]
        # Mirroring the arm in the base's x-z plane flips rotations about z and x, not about y.
        if side == "l" and index in (0, 2, 4, 6):
            return (-hi, -lo)
        return (lo, hi)


TIAGO_PP = RobotSpec()

# Per arm joint: axis, servo stiffness (N m/rad), force limit (N m), damping, armature.
_ARM_AXES = ("0 0 1", "0 1 0", "1 0 0", "0 1 0", "1 0 0", "0 1 0", "1 0 0")
_ARM_KP = (800, 800, 400, 400, 120, 120, 80)
_ARM_FORCE = (90, 90, 50, 50, 18, 18, 12)
_ARM_DAMPING = (40, 40, 20, 20, 4, 4, 3)
_ARM_ARMATURE = 0.05

# Collision classes (see the module docstring).
ROBOT_COLLISION = 'contype="2" conaffinity="1"'
WORLD_COLLISION = 'contype="1" conaffinity="3"'

# The tucked pose: upper arms raised, elbows bent down, grippers pointing down just inside the
# base footprint at ~0.75 m, so the base can drive up to furniture without the arms touching it.
HOME_ARM = (0.0, -1.4, 0.0, 2.2, 0.0, 0.77, 0.0)
# With the torso up this far the tucked grippers are at ~1.05 m, above counters (0.9 m): moving
# from the tucked pose to a grasp does not sweep the hand through what stands on them.
HOME_TORSO = 0.30


# Out of the head camera's way while it looks: upper arm and forearm straight up beside the head.
# Tucked, the grippers hang in front of the camera, and with the head turned to a side the upper
# arm of that side covers a third of the frame (the ends of a counter were seen past it, or not).
LOOK_ARM = (0.0, -1.5, 0.0, 0.0, 0.0, 0.0, 0.0)


def home_arm(side: str, spec: RobotSpec = TIAGO_PP, pose: tuple[float, ...] = HOME_ARM) -> tuple[float, ...]:
    """``pose`` (the right arm's joint values; default the tucked pose) for ``side``'s arm."""
    out = []
    for i, q in enumerate(pose):
        lo, hi = spec.arm_range(side, i)
        q = -q if side == "l" and i in (0, 2, 4, 6) else q
        out.append(min(max(q, lo), hi))
    return tuple(out)


def _arm_xml(side: str, spec: RobotSpec) -> str:
    """One arm, from the shoulder to the fingers; nested bodies, one joint each."""
    sign = -1 if side == "r" else 1
    rgba = 'rgba="0.85 0.85 0.85 1"'
    links = []
    # Each entry: body position relative to its parent, and the link geom (fromto along x).
    positions = [
        f"0 {sign * spec.shoulder_offset_y} -0.05",   # 1 shoulder yaw, hanging off the torso top
        "0 0 0",                                      # 2 pitch (axes meet)
        "0 0 0",                                      # 3 upper-arm roll
        f"{spec.upper_arm} 0 0",                      # 4 elbow
        "0 0 0",                                      # 5 wrist roll at the elbow end of the forearm
        f"{spec.forearm} 0 0",                        # 6 wrist pitch
        "0 0 0",                                      # 7 wrist roll
    ]
    geoms = [
        f'<geom type="sphere" size="0.06" mass="1.0" {ROBOT_COLLISION} {rgba}/>',
        f'<geom type="sphere" size="0.05" mass="0.5" {ROBOT_COLLISION} {rgba}/>',
        f'<geom type="capsule" fromto="0.06 0 0 {spec.upper_arm - 0.05} 0 0" size="0.045" mass="1.8" '
        f'{ROBOT_COLLISION} {rgba}/>',
        f'<geom type="sphere" size="0.05" mass="0.6" {ROBOT_COLLISION} {rgba}/>',
        f'<geom type="capsule" fromto="0.05 0 0 {spec.forearm - 0.05} 0 0" size="0.04" mass="1.2" '
        f'{ROBOT_COLLISION} {rgba}/>',
        f'<geom type="sphere" size="0.04" mass="0.4" {ROBOT_COLLISION} {rgba}/>',
        _gripper_xml(side, spec),
    ]
    for i in range(7):
        lo, hi = spec.arm_range(side, i)
        name = f"{side}_arm_{i + 1}"
        links.append(
            f'<body name="{side}_link_{i + 1}" pos="{positions[i]}" gravcomp="1">'
            f'<joint name="{name}" type="hinge" axis="{_ARM_AXES[i]}" range="{lo:.4f} {hi:.4f}" '
            f'damping="{_ARM_DAMPING[i]}" armature="{_ARM_ARMATURE}"/>'
            f'{geoms[i]}'
        )
    return "".join(links) + "</body>" * 7


def _gripper_xml(side: str, spec: RobotSpec) -> str:
    """Palm along the last link's x axis; two fingers slide along y; the TCP sits between the pads."""
    tcp = spec.wrist_to_tcp
    pad = 'friction="1.2 0.02 0.001" condim="4" solref="0.004 1" rgba="0.2 0.2 0.2 1"'
    fingers = []
    for name, sgn in (("a", 1), ("b", -1)):
        fingers.append(
            f'<body name="{side}_finger_{name}" pos="0 0 0" gravcomp="1">'
            f'<joint name="{side}_finger_{name}" type="slide" axis="0 {sgn} 0" range="0 {spec.finger_stroke}" '
            f'damping="8" armature="0.02"/>'
            # The pad's inner face lies at y = ±q, so the aperture is 2 q.
            f'<geom name="{side}_pad_{name}" type="box" pos="{tcp} {sgn * PAD_HALF[1]} 0" '
            f'size="{PAD_HALF[0]} {PAD_HALF[1]} {PAD_HALF[2]}" '
            f'mass="0.05" {ROBOT_COLLISION} {pad}/>'
            f'<geom type="box" pos="{tcp - 0.045} {sgn * 0.006} 0" size="0.02 0.006 0.012" mass="0.03" '
            f'{ROBOT_COLLISION} rgba="0.3 0.3 0.3 1"/>'
            f'</body>'
        )
    return (
        f'<geom name="{side}_palm" type="box" pos="0.06 0 0" size="0.03 0.05 0.03" mass="0.5" {ROBOT_COLLISION} '
        f'rgba="0.3 0.3 0.3 1"/>'
        f'<site name="{tcp_site(side)}" pos="{tcp} 0 0" size="0.01" rgba="1 0 0 0.5"/>'
        + "".join(fingers)
    )


def robot_body_xml(spec: RobotSpec = TIAGO_PP, mobile: bool = True,
                   pose: tuple[float, float, float] = (0, 0, 0)) -> str:
    """The robot's body tree for ``<worldbody>``. ``mobile=False`` welds the base to the origin
    (the kinematic model the inverse kinematics works in, in the base frame). ``pose`` is where
    the base body sits; the world leaves it at the origin so that the base joints' values are
    the base's world pose."""
    x, y, yaw = pose
    base_joints = ""
    if mobile:
        # Slides on x/y and a yaw hinge: the holonomic base. Heavy damping makes the base behave like
        # a velocity-controlled platform under the position servos (no oscillation).
        base_joints = (
            '<joint name="base_x" type="slide" axis="1 0 0" damping="4000" armature="5"/>'
            '<joint name="base_y" type="slide" axis="0 1 0" damping="4000" armature="5"/>'
            '<joint name="base_yaw" type="hinge" axis="0 0 1" damping="400" armature="2"/>'
        )
    r, h = spec.base_radius, spec.base_height
    lift_z = spec.shoulder_height + 0.05     # the lift link's origin; shoulders hang 5 cm below it
    head = (
        '<body name="head_pan_link" pos="0 0 0.17" gravcomp="1">'
        '<inertial pos="0 0 0" mass="0.5" diaginertia="0.002 0.002 0.002"/>'
        f'<joint name="head_pan" type="hinge" axis="0 0 1" range="{spec.head_pan[0]} {spec.head_pan[1]}" damping="2" '
        'armature="0.01"/>'
        '<body name="head_tilt_link" pos="0 0 0.05" gravcomp="1">'
        f'<joint name="head_tilt" type="hinge" axis="0 1 0" range="{spec.head_tilt[0]} {spec.head_tilt[1]}" '
        'damping="2" armature="0.01"/>'
        f'<geom type="box" size="0.08 0.11 0.08" mass="1.5" {ROBOT_COLLISION} rgba="0.9 0.9 0.9 1"/>'
        # MuJoCo cameras look along their -z with +y up: x=(0,-1,0), y=(0,0,1) looks along +x.
        f'<camera name="head_camera" pos="0.09 0 0.02" xyaxes="0 -1 0 0 0 1" fovy="{spec.camera_fovy}"/>'
        '</body></body>'
    )
    arms = "".join(_arm_xml(side, spec) for side in ARM_SIDES)
    return (
        f'<body name="base" pos="{x} {y} 0" euler="0 0 {yaw}">'
        + base_joints
        + f'<geom name="base_geom" type="cylinder" pos="0 0 {0.02 + h / 2}" size="{r} {h / 2}" mass="{spec.base_mass}" '
        f'{ROBOT_COLLISION} rgba="0.25 0.25 0.28 1"/>'
        f'<geom name="torso_column" type="box" pos="{spec.torso_x} 0 {0.02 + h + 0.14}" size="0.11 0.13 0.14" '
        f'mass="8" {ROBOT_COLLISION} rgba="0.9 0.9 0.9 1"/>'
        f'<body name="torso_lift_link" pos="{spec.torso_x} 0 {lift_z}" gravcomp="1">'
        f'<joint name="torso_lift" type="slide" axis="0 0 1" range="0 {spec.torso_stroke}" damping="1500" '
        'armature="5"/>'
        f'<geom type="box" pos="0 0 -0.15" size="0.1 0.12 0.15" mass="6" {ROBOT_COLLISION} rgba="0.95 0.95 0.95 1"/>'
        + head + arms
        + '</body></body>'
    )


def robot_actuator_xml(spec: RobotSpec = TIAGO_PP, mobile: bool = True) -> str:
    """Position servos on every joint; the skills move the robot only through these."""
    out = []
    if mobile:
        out.append('<position name="base_x" joint="base_x" kp="40000" forcerange="-4000 4000"/>')
        out.append('<position name="base_y" joint="base_y" kp="40000" forcerange="-4000 4000"/>')
        out.append('<position name="base_yaw" joint="base_yaw" kp="3000" forcerange="-600 600"/>')
    out.append(f'<position name="torso_lift" joint="torso_lift" kp="20000" ctrlrange="0 {spec.torso_stroke}" '
               'forcerange="-2000 2000"/>')
    for side in ARM_SIDES:
        for i, joint in enumerate(arm_joints(side)):
            lo, hi = spec.arm_range(side, i)
            out.append(f'<position name="{joint}" joint="{joint}" kp="{_ARM_KP[i]}" ctrlrange="{lo:.4f} {hi:.4f}" '
                       f'forcerange="-{_ARM_FORCE[i]} {_ARM_FORCE[i]}"/>')
        for joint in finger_joints(side):
            # Stiff enough to close fast; the force range is the grip force. A closed hand is
            # commanded past shut (FINGER_SQUEEZE), so that it squeezes with the full force on a
            # thin wall as on a thick bottle, as a force-controlled gripper does.
            out.append(f'<position name="{joint}" joint="{joint}" kp="{FINGER_KP}" '
                       f'ctrlrange="{-FINGER_SQUEEZE} {spec.finger_stroke}" '
                       f'forcerange="-{spec.finger_force} {spec.finger_force}"/>')
    for joint, (lo, hi) in zip(HEAD_JOINTS, (spec.head_pan, spec.head_tilt)):
        out.append(f'<position name="{joint}" joint="{joint}" kp="50" ctrlrange="{lo} {hi}" forcerange="-10 10"/>')
    return "".join(out)


def robot_only_xml(spec: RobotSpec = TIAGO_PP) -> str:
    """A model of the robot alone with its base welded at the origin: the inverse kinematics solves
    in it (targets in the base frame), apart from the world's objects and free joints."""
    return (
        '<mujoco model="tiago_pp_kinematics"><compiler angle="radian"/>'
        '<option gravity="0 0 0"/>'
        f'<worldbody>{robot_body_xml(spec, mobile=False)}</worldbody>'
        f'<actuator>{robot_actuator_xml(spec, mobile=False)}</actuator>'
        '</mujoco>'
    )


__all__ = [
    "ARM_SIDES", "BASE_JOINTS", "HEAD_JOINTS", "HOME_ARM", "HOME_TORSO", "LOOK_ARM", "ROBOT_COLLISION", "RobotSpec",
    "TIAGO_PP",
    "PAD_HALF", "TORSO_JOINT", "WORLD_COLLISION", "arm_joints", "finger_joints", "home_arm", "robot_actuator_xml",
    "pad_geoms", "robot_body_xml", "robot_only_xml", "tcp_site", "FINGER_KP", "FINGER_SQUEEZE",
]
