"""Camera images as numpy arrays, to and from the fields of ``sensor_msgs/Image``.

Written here instead of using cv_bridge: cv_bridge is not installable from the package
registries this project builds from, and the conversion is a reshape over the message's
row stride. The functions take and return the message *fields* (no rclpy), so they are
testable with plain pytest; ``nodes/perception.py`` wraps them around the message.

Supported encodings (what cameras and depth sensors publish, REP 118):

* colour: ``rgb8``, ``bgr8``, ``rgba8``, ``bgra8`` -> 3-channel BGR uint8 for the detector
* ``mono8`` -> grey, expanded to BGR for the detector
* depth: ``16UC1`` (millimetres) and ``32FC1`` (metres) -> float32 metres, NaN where unknown
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from affplan_ros.core.errors import AffplanError

# encoding -> (numpy dtype, channels)
ENCODINGS: dict[str, tuple[str, int]] = {
    "rgb8": ("uint8", 3), "bgr8": ("uint8", 3), "rgba8": ("uint8", 4), "bgra8": ("uint8", 4),
    "mono8": ("uint8", 1), "16UC1": ("uint16", 1), "32FC1": ("float32", 1),
}
COLOR_ENCODINGS = ("rgb8", "bgr8", "rgba8", "bgra8", "mono8")
DEPTH_ENCODINGS = ("16UC1", "32FC1")
MAX_SIDE = 16384  # larger than any camera; a bigger header is a corrupt message


class ImageFormatError(AffplanError, ValueError):
    """An image message that cannot be turned into an array (encoding, size, data length)."""


@dataclass(frozen=True)
class ImageFields:
    """The fields of a ``sensor_msgs/Image`` that carry pixels."""

    height: int
    width: int
    encoding: str
    step: int
    data: bytes
    is_bigendian: bool = False


def to_array(img: ImageFields, allowed: tuple[str, ...] = tuple(ENCODINGS)) -> np.ndarray:
    """The pixels as an (h, w) or (h, w, c) array in the message's own encoding (a copy)."""
    if img.encoding not in ENCODINGS:
        raise ImageFormatError(f"image encoding {img.encoding!r} is not supported; use one of {', '.join(allowed)}")
    if img.encoding not in allowed:
        raise ImageFormatError(f"image encoding {img.encoding!r} is not accepted here; "
                               f"expected one of {', '.join(allowed)}")
    dtype_name, channels = ENCODINGS[img.encoding]
    dtype = np.dtype(dtype_name).newbyteorder(">" if img.is_bigendian else "<")
    if not (0 < img.height <= MAX_SIDE and 0 < img.width <= MAX_SIDE):
        raise ImageFormatError(f"image size {img.width}x{img.height} is invalid (empty or larger than {MAX_SIDE})")
    row = img.width * channels * dtype.itemsize
    if img.step < row:
        raise ImageFormatError(f"image step {img.step} is smaller than one row of {img.width} {img.encoding} "
                               f"pixels ({row} bytes)")
    if len(img.data) != img.step * img.height:
        raise ImageFormatError(f"image data has {len(img.data)} bytes but {img.width}x{img.height} {img.encoding} "
                               f"with step {img.step} needs {img.step * img.height}")
    buf = np.frombuffer(bytes(img.data), dtype=np.uint8)
    rows = buf.reshape(img.height, img.step)[:, :row]
    arr = np.ascontiguousarray(rows).view(dtype).reshape(img.height, img.width, channels)
    arr = arr.astype(dtype.newbyteorder("="), copy=False)
    return arr[:, :, 0] if channels == 1 else arr


def to_bgr(img: ImageFields) -> np.ndarray:
    """A colour image as contiguous BGR uint8 (h, w, 3), what OpenCV and ultralytics expect."""
    arr = to_array(img, COLOR_ENCODINGS)
    if img.encoding == "mono8":
        return np.repeat(arr[:, :, None], 3, axis=2)
    bgr = {"bgr8": arr, "bgra8": arr[:, :, :3], "rgb8": arr[:, :, ::-1], "rgba8": arr[:, :, 2::-1]}[img.encoding]
    return np.ascontiguousarray(bgr)


def to_depth_m(img: ImageFields) -> np.ndarray:
    """A depth image as float32 metres (h, w); 0 and non-finite readings become NaN."""
    arr = to_array(img, DEPTH_ENCODINGS)
    depth = arr.astype(np.float32) / 1000.0 if img.encoding == "16UC1" else arr.astype(np.float32)
    depth[~np.isfinite(depth) | (depth <= 0)] = np.nan
    return depth


def from_array(arr: np.ndarray, encoding: str) -> ImageFields:
    """Fields of an Image message holding ``arr`` (tightly packed, little-endian)."""
    if encoding not in ENCODINGS:
        raise ImageFormatError(f"image encoding {encoding!r} is not supported; use one of {', '.join(ENCODINGS)}")
    dtype_name, channels = ENCODINGS[encoding]
    arr = np.asarray(arr)
    shape_ok = (arr.ndim == 2 and channels == 1) or (arr.ndim == 3 and arr.shape[2] == channels)
    if not shape_ok:
        raise ImageFormatError(f"array of shape {arr.shape} does not fit encoding {encoding} ({channels} channel(s))")
    arr = np.ascontiguousarray(arr.astype(np.dtype(dtype_name).newbyteorder("<"), copy=False))
    h, w = arr.shape[:2]
    return ImageFields(h, w, encoding, w * channels * arr.dtype.itemsize, arr.tobytes(), False)
