"""sensor_msgs/Image fields <-> numpy without cv_bridge: every supported encoding, and bad input."""
from __future__ import annotations

import numpy as np
import pytest

from affplan_ros.core.perception.image import (
    ImageFields,
    ImageFormatError,
    from_array,
    to_array,
    to_bgr,
    to_depth_m,
)


def _rgb(h=4, w=5):
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (h, w, 3), dtype=np.uint8)


def test_rgb8_and_bgr8_come_out_as_the_same_bgr_pixels():
    bgr = _rgb()
    assert np.array_equal(to_bgr(from_array(bgr, "bgr8")), bgr)
    assert np.array_equal(to_bgr(from_array(bgr[:, :, ::-1], "rgb8")), bgr)


def test_alpha_and_mono_encodings_become_three_channel_bgr():
    bgr = _rgb()
    bgra = np.dstack([bgr, np.full(bgr.shape[:2], 7, np.uint8)])
    assert np.array_equal(to_bgr(from_array(bgra, "bgra8")), bgr)
    rgba = np.dstack([bgr[:, :, ::-1], np.zeros(bgr.shape[:2], np.uint8)])
    assert np.array_equal(to_bgr(from_array(rgba, "rgba8")), bgr)
    grey = bgr[:, :, 0]
    out = to_bgr(from_array(grey, "mono8"))
    assert out.shape == (4, 5, 3) and all(np.array_equal(out[:, :, c], grey) for c in range(3))


def test_row_padding_in_step_is_skipped():
    bgr = _rgb(3, 2)
    padded = b"".join(bgr[r].tobytes() + b"\xff\xff" for r in range(3))
    img = ImageFields(3, 2, "bgr8", 2 * 3 + 2, padded)
    assert np.array_equal(to_bgr(img), bgr)


def test_depth_16uc1_is_millimetres_and_32fc1_metres_with_invalid_as_nan():
    mm = np.array([[0, 1500], [65535, 800]], np.uint16)
    d = to_depth_m(from_array(mm, "16UC1"))
    assert d.dtype == np.float32 and np.isnan(d[0, 0])
    assert d[0, 1] == pytest.approx(1.5) and d[1, 1] == pytest.approx(0.8)
    m = np.array([[1.25, np.inf], [-1.0, 2.0]], np.float32)
    d = to_depth_m(from_array(m, "32FC1"))
    assert d[0, 0] == pytest.approx(1.25) and np.isnan(d[0, 1]) and np.isnan(d[1, 0])


def test_big_endian_depth_is_read_correctly():
    mm = np.array([[1000, 2000]], np.uint16)
    img = ImageFields(1, 2, "16UC1", 4, mm.astype(">u2").tobytes(), is_bigendian=True)
    assert to_array(img).tolist() == [[1000, 2000]]


@pytest.mark.parametrize("img, words", [
    (ImageFields(2, 2, "yuv422", 4, bytes(8)), ["yuv422", "not supported"]),
    (ImageFields(2, 2, "bgr8", 6, bytes(11)), ["11 bytes", "needs 12"]),
    (ImageFields(2, 2, "bgr8", 4, bytes(8)), ["step 4", "smaller than one row"]),
    (ImageFields(0, 2, "bgr8", 6, b""), ["size 2x0", "invalid"]),
])
def test_bad_images_give_errors_that_name_the_problem(img, words):
    with pytest.raises(ImageFormatError) as err:
        to_bgr(img)
    assert all(w in str(err.value) for w in words)


def test_a_depth_encoding_is_refused_where_colour_is_expected_and_vice_versa():
    with pytest.raises(ImageFormatError, match="16UC1.*not accepted.*expected one of rgb8"):
        to_bgr(from_array(np.zeros((2, 2), np.uint16), "16UC1"))
    with pytest.raises(ImageFormatError, match="bgr8.*not accepted"):
        to_depth_m(from_array(_rgb(), "bgr8"))


def test_from_array_checks_the_shape_against_the_encoding():
    with pytest.raises(ImageFormatError, match=r"shape \(4, 5, 3\).*mono8"):
        from_array(_rgb(), "mono8")
