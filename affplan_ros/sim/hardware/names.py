"""What the simulated robot's joints, links, frames and controllers are called on the ROS graph
(config/hardware/<robot>.yaml), checked against the physics model it names."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml


class HardwareNamesError(ValueError):
    """The names file is malformed or names what the model lacks."""


@dataclass(frozen=True)
class GripperNames:
    hand: str
    joints: tuple[str, str]     # model joints of the two fingers
    action: str                 # the GripperCommand action


@dataclass(frozen=True)
class TrajectoryControllerNames:
    name: str
    joints: tuple[str, ...]     # model joints
    action: str                 # the FollowJointTrajectory action


@dataclass(frozen=True)
class CameraNames:
    model_camera: str
    link: str
    optical_frame: str
    # The topics, as a Tiago++'s head camera driver publishes them.
    rgb_topic: str = "/head_front_camera/rgb/image_raw"
    depth_topic: str = "/head_front_camera/depth_registered/image_raw"
    info_topic: str = "/head_front_camera/rgb/camera_info"
    depth_info_topic: str = "/head_front_camera/depth_registered/camera_info"


@dataclass(frozen=True)
class HardwareNames:
    joints: dict[str, str]          # model joint -> ROS joint
    links: dict[str, str]           # model body -> ROS link
    tool_frames: dict[str, str]     # model site -> ROS frame
    grippers: tuple[GripperNames, ...]
    trajectory_controllers: tuple[TrajectoryControllerNames, ...]
    camera: CameraNames
    map_frame: str = "map"
    odom_frame: str = "odom"
    footprint_frame: str = "base_footprint"
    navigate_action: str = "/navigate_to_pose"
    cmd_vel: str = "/cmd_vel"
    follow_path_action: str = "/follow_path"

    @property
    def base_link(self) -> str:
        return self.links["base"]

    @classmethod
    def from_file(cls, path: Path) -> "HardwareNames":
        try:
            raw = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise HardwareNamesError(f"{path}: {exc}") from exc
        try:
            grippers = tuple(GripperNames(hand, tuple(spec["joints"]), spec["action"])
                             for hand, spec in raw["grippers"].items())
            if any(len(g.joints) != 2 for g in grippers):
                raise HardwareNamesError(f"{path}: each gripper names its two finger joints")
            controllers = tuple(TrajectoryControllerNames(name, tuple(spec["joints"]), spec["action"])
                                for name, spec in (raw.get("trajectory_controllers") or {}).items())
            cam, frames, base = raw["camera"], raw.get("frames", {}), raw.get("base", {})
            names = cls(dict(raw["joints"]), dict(raw["links"]), dict(raw.get("tool_frames", {})), grippers,
                        controllers,
                        CameraNames(cam["model_camera"], cam["link"], cam["optical_frame"],
                                    **{k: str(cam[k]) for k in _CAMERA_TOPICS if k in cam}),
                        frames.get("map", "map"), frames.get("odom", "odom"),
                        frames.get("base_footprint", "base_footprint"),
                        base.get("navigate_action", "/navigate_to_pose"), base.get("cmd_vel", "/cmd_vel"),
                        base.get("follow_path_action", "/follow_path"))
        except (KeyError, TypeError, AttributeError) as exc:
            raise HardwareNamesError(f"{path}: missing or malformed entry {exc}") from exc
        if "base" not in names.links:
            raise HardwareNamesError(f"{path}: links must name the model's 'base' body")
        return names

    def check(self, model) -> None:
        """Every name given exists in ``model`` (a mujoco.MjModel), and ROS names are unique."""
        missing = [f"joint {j}" for j in self.joints if _missing(model.joint, j)]
        missing += [f"body {b}" for b in self.links if _missing(model.body, b)]
        missing += [f"site {s}" for s in self.tool_frames if _missing(model.site, s)]
        missing += [f"joint {j}" for g in self.grippers for j in g.joints if j not in self.joints]
        missing += [f"joint {j}" for c in self.trajectory_controllers for j in c.joints if j not in self.joints]
        if _missing(model.camera, self.camera.model_camera):
            missing.append(f"camera {self.camera.model_camera}")
        if missing:
            raise HardwareNamesError(f"the physics model has no {', '.join(missing)}")
        frames = list(self.links.values()) + list(self.tool_frames.values()) + [
            self.camera.link, self.camera.optical_frame, self.map_frame, self.odom_frame, self.footprint_frame]
        doubled = sorted({f for f in frames if frames.count(f) > 1})
        if doubled:
            raise HardwareNamesError(f"frame names used twice: {', '.join(doubled)}")


_CAMERA_TOPICS = ("rgb_topic", "depth_topic", "info_topic", "depth_info_topic")


def _missing(lookup, name: str) -> bool:
    try:
        lookup(name)
    except KeyError:
        return True
    return False
